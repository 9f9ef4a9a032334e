"""`metadata.managedFields`: who set which field, as the API server's field manager records it
(server-side apply's bookkeeping, computed there by sigs.k8s.io/structured-merge-diff).

Every write through the API updates the entries of the object it stores. An entry is one
manager (the `fieldManager` parameter, else the User-Agent up to its first '/'), one operation
(`Apply` for a server-side apply patch, `Update` for a create, an update or another patch), its
apiVersion and subresource, the time it last changed something, and `fieldsV1`, the fields it
owns as a trie in the API server's format:

    {"f:metadata": {"f:labels": {"f:app": {}}},
     "f:status": {"f:conditions": {"k:{\\"type\\":\\"Ready\\"}": {".": {}, "f:status": {}}}}}

`f:NAME` is a field or a map key, `k:{KEYS}` an item of a map-type list (its key fields, sorted),
`v:VALUE` an item of a set, `.` the node itself when its children are listed too. Atomic
lists and maps (lists are atomic unless their schema says `set` or `map`) are owned whole.
The API server also defines `i:INDEX`, but none of its types has a list merged by position,
so it never writes one; neither does the emulator.

The rules (structured-merge-diff's Updater):
- an Apply entry owns the fields of the applied body; an Update entry adds the fields the
  write changed (added or modified; a map, list or item it added counts itself, hence `.`)
  to those it owned, and drops those the write removed;
- whatever a write changes or removes, the other entries lose (their value is gone); entries
  left with no field are dropped. No conflict is ever raised: an apply behaves as with
  `force=true`;
- an applier keeps one entry whatever the apiVersion it applies with; Update entries are one
  per apiVersion. Beyond 10 Update entries the oldest are merged into `ancient-changes`;
- the fields nobody owns (apiVersion, kind, metadata name, namespace, uid, resourceVersion,
  generation, creationTimestamp, managedFields) are left out, and so is what the write could
  not change: status in a write to the resource when the type has a status subresource,
  everything but status in a write to /status;
- a client may send `managedFields` with a create, update or non-apply patch: valid entries
  replace the stored ones, an empty list (or one empty entry) clears them, anything else is
  ignored; an apply that carries them is refused. Writes to a subresource ignore them.

Types: a custom resource's lists and maps merge as its schema says (`x-kubernetes-list-type`,
`x-kubernetes-list-map-keys` with their defaults, `x-kubernetes-map-type`), unknown fields
as maps with atomic lists. Built-in types have no schema here: their lists are atomic except
those in BUILTIN_FIELDS, known by field name wherever they appear (ObjectMeta included).
"""
from __future__ import annotations

import json
from dataclasses import dataclass

APPLY, UPDATE = 'Apply', 'Update'
MAX_UPDATE_ENTRIES = 10              # the API server's DefaultMaxUpdateManagers
ANCIENT = 'ancient-changes'
ABSENT = object()                    # a field that is not there (None is a JSON null)

# Never owned (the API server's stripmeta); `metadata` itself neither, only what is in it.
UNOWNED = {('f:apiVersion',), ('f:kind',), ('f:metadata',)} | {
    ('f:metadata', 'f:' + f) for f in ('name', 'namespace', 'uid', 'resourceVersion', 'generation',
                                        'creationTimestamp', 'selfLink', 'managedFields')}

BUILTIN_MARK = 'x-emulator-built-in'
BUILTIN = {BUILTIN_MARK: True}       # a node of a built-in type: its fields go by name


def _keyed(*keys, defaults=None):
    items = {**BUILTIN, 'properties': {k: {'default': v} for k, v in (defaults or {}).items()}}
    return {'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': list(keys), 'items': items}


# The merge types of built-in fields an operator commonly writes, from Kubernetes' OpenAPI.
# Ports: a container's are keyed by containerPort and protocol, a Service's by port and
# protocol (a key an item lacks is left out), protocol defaulting to TCP.
BUILTIN_FIELDS = {
    'ownerReferences': _keyed('uid'),
    'finalizers': {'x-kubernetes-list-type': 'set'},
    'conditions': _keyed('type'),
    'containers': _keyed('name'), 'initContainers': _keyed('name'),
    'ephemeralContainers': _keyed('name'), 'volumes': _keyed('name'), 'env': _keyed('name'),
    'imagePullSecrets': _keyed('name'), 'volumeMounts': _keyed('mountPath'),
    'ports': _keyed('containerPort', 'port', 'protocol', defaults={'protocol': 'TCP'}),
    'selector': {'x-kubernetes-map-type': 'atomic'},
    'nodeSelector': {'x-kubernetes-map-type': 'atomic'},
}


@dataclass
class Entry:
    manager: str
    operation: str
    api_version: str
    subresource: str
    time: str | None
    fields: set[tuple[str, ...]]

    @property
    def key(self):
        # An applier's entry is the same whatever apiVersion it applies with.
        return (self.manager, self.operation, '' if self.operation == APPLY else self.api_version, self.subresource)


@dataclass
class Write:
    """The request, as the field manager sees it."""
    manager: str
    operation: str
    api_version: str
    subresource: str
    has_status: bool        # the type has a status subresource
    schema: dict            # of a custom resource's version (openAPIV3Schema), or BUILTIN
    time: str


def manager_from_user_agent(user_agent: str) -> str:
    """The API server's default manager: the User-Agent before its first '/', printable
    characters only, at most 128 bytes."""
    out = ''
    for ch in user_agent.split('/')[0]:
        if not ch.isprintable():
            continue
        if len((out + ch).encode()) > 128:
            break
        out += ch
    return out


def updated(write: Write, old: dict | None, new: dict, provided=ABSENT, applied: dict | None = None) -> list[dict]:
    """The managedFields of `new`, written over `old` (None for a create) by `write`.
    `provided`: the managedFields the client sent (ABSENT if none); `applied`: the body of
    a server-side apply."""
    live = (old or {}).get('metadata', {}).get('managedFields')
    entries = _base(provided, live, bool(write.subresource) or applied is not None)
    changed, removed = set(), set()
    _compare(_without_managed_fields(old or {}), _without_managed_fields(new), _root(write.schema), (), changed, removed)
    changed, removed = _owned(changed, write), _owned(removed, write)
    mine = Entry(write.manager, write.operation, write.api_version, write.subresource, None, set())
    before = entries.get(mine.key)
    owned_before = set(before.fields) if before is not None else None
    # A changed or removed value is no longer what its previous owners set.
    for entry in entries.values():
        entry.fields -= changed | removed
    if write.operation == APPLY:
        mine.fields = _owned(_fields_of(applied, _root(write.schema), (), set()), write)
    else:
        mine.fields = (before.fields if before is not None else set()) | changed
    mine.time = before.time if before is not None else None
    if changed or removed or mine.fields != owned_before:
        mine.time = write.time
    entries[mine.key] = mine
    return _encode(_cap(entries))


def with_managed_fields(obj: dict, entries: list[dict]) -> dict:
    """`obj` with these entries (none: without the field), in a metadata dict of its own (a
    stored object's is never changed)."""
    md = {k: v for k, v in (obj.get('metadata') or {}).items() if k != 'managedFields'}
    if entries:
        md['managedFields'] = entries
    return {**obj, 'metadata': md}


# ---- which entries a write starts from -------------------------------------------------------

def _base(provided, live, ignore_provided: bool) -> dict:
    """The entries the write updates: those the client sent if valid (an empty list or one
    empty entry: none), else the stored ones (the API server's decodeManagedFields)."""
    if not ignore_provided and provided is not ABSENT and provided is not None:
        if provided == [] or provided == [{}]:
            return {}
        decoded = _decode(provided)
        if decoded:
            return decoded
    return _decode(live or []) or {}


def _decode(entries) -> dict | None:
    if not isinstance(entries, list):
        return None
    out = {}
    for e in entries:
        if (not isinstance(e, dict) or e.get('operation') not in (APPLY, UPDATE) or not e.get('apiVersion')
                or e.get('fieldsType') != 'FieldsV1' or not isinstance(e.get('fieldsV1', {}), dict)):
            return None
        entry = Entry(e.get('manager', ''), e['operation'], e['apiVersion'], e.get('subresource', ''),
                      e.get('time'), _paths(e.get('fieldsV1', {}), (), set()))
        out[entry.key] = entry
    return out


def _cap(entries: dict) -> dict:
    """At most MAX_UPDATE_ENTRIES Update entries: the oldest are merged into one
    `ancient-changes` entry per apiVersion (what keeps an object's size bounded)."""
    updates = sorted((e for e in entries.values() if e.operation == UPDATE and e.fields),
                     key=lambda e: (e.time or '', e.manager))
    excess = len(updates) - MAX_UPDATE_ENTRIES
    for e in updates:
        if excess <= 0:
            break
        bucket = Entry(ANCIENT, UPDATE, e.api_version, '', e.time, set())
        if e.key == bucket.key:
            continue
        del entries[e.key]
        if bucket.key in entries:
            entries[bucket.key].fields |= e.fields
            entries[bucket.key].time = e.time
            excess -= 1
        else:
            bucket.fields = e.fields
            entries[bucket.key] = bucket
    return entries


def _encode(entries: dict) -> list[dict]:
    """In the API server's order: Apply before Update, then by time, manager, apiVersion."""
    out = []
    for e in sorted((e for e in entries.values() if e.fields),
                    key=lambda e: (e.operation, e.time or '', e.manager, e.api_version, e.subresource)):
        entry = {'manager': e.manager, 'operation': e.operation, 'apiVersion': e.api_version,
                 'time': e.time, 'fieldsType': 'FieldsV1', 'fieldsV1': _trie(e.fields),
                 'subresource': e.subresource}
        out.append({k: v for k, v in entry.items() if v or k == 'fieldsV1'})
    return out


# ---- field paths -----------------------------------------------------------------------------

def _paths(trie: dict, prefix: tuple, out: set) -> set:
    for key, child in trie.items():
        if key == '.':
            out.add(prefix)
        elif isinstance(child, dict) and child:
            _paths(child, prefix + (key,), out)
        else:
            out.add(prefix + (key,))
    return out


_ORDER = {'f': 0, 'k': 1, 'v': 2, 'i': 3}   # structured-merge-diff's order of path elements


def _trie(paths: set) -> dict:
    root: dict = {}
    for path in paths:
        node = root
        for element in path:
            node = node.setdefault(element, {})
        node['.'] = {}
    return _tidy(root)


def _tidy(node: dict) -> dict:
    """`.` alone means a leaf: `{}`; otherwise `.` first, then the children in order."""
    if list(node) == ['.']:
        return {}
    out = {'.': {}} if '.' in node else {}
    for key in sorted((k for k in node if k != '.'), key=lambda k: (_ORDER.get(k[0], 9), k)):
        out[key] = _tidy(node[key])
    return out


def _owned(paths: set, write: Write) -> set:
    out = {p for p in paths if p not in UNOWNED}
    if write.has_status:
        is_status = write.subresource == 'status'
        out = {p for p in out if (p[:1] == ('f:status',)) == is_status}
    return out


def _json(value) -> str:
    return json.dumps(value, separators=(',', ':'), ensure_ascii=False)


# ---- walking an object with its merge types ---------------------------------------------------

def _root(schema: dict) -> dict:
    # The root is a whole object: its `metadata` is an ObjectMeta.
    return {**schema, 'x-kubernetes-embedded-resource': True}


def _child(schema: dict, key: str) -> tuple[dict, bool]:
    """The schema of `key` in an object of `schema`, and whether it is a declared field (False:
    a key of a map)."""
    if schema.get(BUILTIN_MARK) or (key == 'metadata' and schema.get('x-kubernetes-embedded-resource')):
        return BUILTIN_FIELDS.get(key, BUILTIN), True
    props = schema.get('properties') or {}
    if key in props:
        return props[key], True
    extra = schema.get('additionalProperties')
    return (extra if isinstance(extra, dict) else {}), False


def _granular_map(schema: dict, value) -> bool:
    return isinstance(value, dict) and schema.get('x-kubernetes-map-type') != 'atomic'


def _granular_list(schema: dict, value) -> bool:
    return isinstance(value, list) and schema.get('x-kubernetes-list-type') in ('set', 'map')


def _item(schema: dict, item) -> str:
    """The path element of an item of a set or map-type list."""
    if schema.get('x-kubernetes-list-type') == 'set':
        return 'v:' + _json(item)
    defaults = (schema.get('items') or {}).get('properties') or {}
    keys = {}
    for k in schema.get('x-kubernetes-list-map-keys') or []:
        if isinstance(item, dict) and k in item:
            keys[k] = item[k]
        elif 'default' in (defaults.get(k) or {}):
            keys[k] = defaults[k]['default']
    return 'k:' + _json(dict(sorted(keys.items())))


def _fields_of(value, schema: dict, path: tuple, out: set) -> set:
    """The fields `value` sets (structured-merge-diff's ToFieldSet): scalars and atomic values,
    items of sets and map-type lists, keys of maps, empty maps and nulls."""
    if _granular_map(schema, value):
        for key, child in value.items():
            child_schema, declared = _child(schema, key)
            p = path + ('f:' + key,)
            _fields_of(child, child_schema, p, out)
            if not declared or child is None or child == {}:
                out.add(p)
    elif _granular_list(schema, value):
        for item in value:
            p = path + (_item(schema, item),)
            _fields_of(item, schema.get('items') or {}, p, out)
            out.add(p)
    else:
        out.add(path)
    return out


def _empty(value) -> bool:
    return value is ABSENT or (isinstance(value, (dict, list)) and not value)


def _compare(old, new, schema: dict, path: tuple, changed: set, removed: set):
    """Adds to `changed` the fields `new` adds or modifies, to `removed` those it removes
    (structured-merge-diff's Compare): leaves, and the maps, lists and items added or
    removed as a whole."""
    value = new if new is not ABSENT else old
    same_kind = old is ABSENT or new is ABSENT or type(old) is type(new)
    if same_kind and not (_empty(old) and _empty(new)) and _granular_map(schema, value):
        olds, news = old if old is not ABSENT else {}, new if new is not ABSENT else {}
        for key in olds.keys() | news.keys():
            _compare(olds.get(key, ABSENT), news.get(key, ABSENT), _child(schema, key)[0],
                     path + ('f:' + key,), changed, removed)
    elif same_kind and not (_empty(old) and _empty(new)) and _granular_list(schema, value):
        olds, news = _items(schema, old), _items(schema, new)
        for element in olds.keys() | news.keys():
            _compare(olds.get(element, ABSENT), news.get(element, ABSENT), schema.get('items') or {},
                     path + (element,), changed, removed)
    else:
        if old is ABSENT:
            changed.add(path)
        elif new is ABSENT:
            removed.add(path)
        elif old != new or type(old) is not type(new):
            changed.add(path)
        return
    if path and old is ABSENT:
        changed.add(path)
    elif path and new is ABSENT:
        removed.add(path)


def _items(schema: dict, items) -> dict:
    out = {}
    for item in items if items is not ABSENT else []:
        out.setdefault(_item(schema, item), item)   # a repeated key counts once
    return out


def _without_managed_fields(obj: dict) -> dict:
    md = obj.get('metadata') or {}
    return {**obj, 'metadata': {k: v for k, v in md.items() if k != 'managedFields'}}
