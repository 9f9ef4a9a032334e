"""PATCH bodies: JSON merge patch, JSON patch, strategic merge patch and server-side apply.

Strategic merge patch and server-side apply are emulated as JSON merge patches: lists are
replaced whole (no merge keys), apply keeps no field ownership (so no conflicts, and fields a
manager stops applying are not removed). That is what generated operators need (they apply
whole objects, or status with every condition); the README lists it as not emulated.
"""
import copy

from . import errors

MERGE = 'application/merge-patch+json'
JSON_PATCH = 'application/json-patch+json'
STRATEGIC = 'application/strategic-merge-patch+json'
APPLY = 'application/apply-patch+yaml'
KINDS = {MERGE, JSON_PATCH, STRATEGIC, APPLY}


def merge(target, patch):
    """RFC 7386: objects merge key by key, `null` deletes, anything else replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge(result.get(key), value)
    return result


def strip_directives(patch):
    """Drops strategic-merge directives (`$patch`, `$setElementOrder/...`, `$retainKeys`,
    `$deleteFromPrimitiveList/...`), which a plain merge would store as fields."""
    if isinstance(patch, dict):
        return {k: strip_directives(v) for k, v in patch.items() if not k.startswith('$')}
    if isinstance(patch, list):
        return [strip_directives(v) for v in patch if not (isinstance(v, dict) and '$patch' in v)]
    return patch


def _pointer(path: str) -> list[str]:
    if path == '':
        return []
    if not path.startswith('/'):
        raise ValueError(f'invalid JSON pointer {path!r}')
    return [p.replace('~1', '/').replace('~0', '~') for p in path[1:].split('/')]


def _parent(doc, parts):
    node = doc
    for p in parts[:-1]:
        if isinstance(node, list):
            node = node[int(p)]
        elif isinstance(node, dict) and p in node:
            node = node[p]
        else:
            raise KeyError('/'.join(parts))
    return node


def _get(doc, parts):
    node = doc
    for p in parts:
        if isinstance(node, list):
            node = node[int(p)]
        elif isinstance(node, dict):
            node = node[p]
        else:
            raise KeyError(p)
    return node


def json_patch(doc, ops: list):
    """RFC 6902 (add, remove, replace, move, copy, test). As the API server's library does, a
    `test` for `null` passes on a missing path: kube's finalizer helper relies on it."""
    doc = copy.deepcopy(doc)
    for op in ops:
        kind, parts = op.get('op'), _pointer(op.get('path', ''))
        try:
            if kind == 'test':
                try:
                    current = _get(doc, parts)
                except (KeyError, IndexError, ValueError):
                    current = None
                if current != op.get('value'):
                    raise errors.ApiError(422, 'Invalid', f'the server rejected our request due to an error in our request: testing value {op.get("path")} failed')
                continue
            if kind in ('move', 'copy'):
                value = copy.deepcopy(_get(doc, _pointer(op['from'])))
                if kind == 'move':
                    doc = _remove(doc, _pointer(op['from']))
                doc = _add(doc, parts, value)
            elif kind == 'add':
                doc = _add(doc, parts, copy.deepcopy(op.get('value')))
            elif kind == 'remove':
                doc = _remove(doc, parts)
            elif kind == 'replace':
                _get(doc, parts)  # must exist
                doc = _remove(doc, parts)
                doc = _add(doc, parts, copy.deepcopy(op.get('value')))
            else:
                raise errors.bad_request(f'Unexpected kind: {kind}')
        except (KeyError, IndexError, ValueError, TypeError) as e:
            raise errors.ApiError(422, 'Invalid', f'the server rejected our request due to an error in our request: {kind} operation does not apply: doc is missing path: "{op.get("path")}": {e}')
    return doc


def _add(doc, parts, value):
    if not parts:
        return value
    parent, last = _parent(doc, parts), parts[-1]
    if isinstance(parent, list):
        parent.insert(len(parent) if last == '-' else int(last), value)
    elif isinstance(parent, dict):
        parent[last] = value
    else:
        raise KeyError(last)
    return doc


def _remove(doc, parts):
    parent, last = _parent(doc, parts), parts[-1]
    if isinstance(parent, list):
        del parent[int(last)]
    else:
        del parent[last]
    return doc


def apply_patch(current: dict | None, body, content_type: str) -> dict:
    """The object a PATCH of `content_type` makes of `current` (None: it does not exist, which
    only server-side apply accepts)."""
    if content_type == JSON_PATCH:
        if not isinstance(body, list):
            raise errors.bad_request('json patch must be a list of operations')
        return json_patch(current, body)
    if not isinstance(body, dict):
        raise errors.bad_request('the patch must be a JSON object')
    if content_type == STRATEGIC:
        body = strip_directives(body)
    base = current or {}
    return merge(base, body)
