"""The in-memory object store: objects by type, namespace and name, with the indexes that keep
every request's cost independent of the store's history.

- An object is a dict that is never mutated once stored: a write stores a new dict. Reads and
  watch events can then share it without copies, and a watch event keeps the state it had.
- One global resourceVersion counter, as etcd's revision: every write takes the next number.
- Indexes by uid, by owner uid (for the garbage collector) and by namespace (to empty a
  namespace being deleted): a delete finds what it affects without scanning the store.
- `examined` counts the stored objects each operation looks at, so that a test can check
  that a GET costs the same after ten thousand writes as after one.
"""
from __future__ import annotations

import datetime
import uuid
from typing import Callable, Iterator

from .watch import Channel, Event

Key = tuple[str, str]            # (group, plural)
Ref = tuple[Key, str, str]       # (type, namespace or '', name)


def now() -> str:
    return datetime.datetime.now(tz=datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ')


def meta(obj: dict) -> dict:
    return obj.get('metadata') or {}


def owner_uids(obj: dict) -> set[str]:
    return {r.get('uid') for r in meta(obj).get('ownerReferences') or [] if r.get('uid')}


class Store:
    def __init__(self, watch_capacity: int = 1000):
        self.rv = 0
        self.watch_capacity = watch_capacity
        self._objects: dict[Key, dict[str, dict[str, dict]]] = {}   # type -> ns -> name -> obj
        self._channels: dict[Key, Channel] = {}
        self._by_uid: dict[str, Ref] = {}
        self._dependents: dict[str, set[Ref]] = {}   # owner uid -> dependents
        self._in_namespace: dict[str, set[Ref]] = {}
        self.examined = 0
        # Called after an object is removed for good (garbage collection, namespaces, CRDs).
        self.on_removed: list[Callable[[Ref, dict], None]] = []

    # ---- reads ------------------------------------------------------------------------------

    def get(self, key: Key, ns: str, name: str) -> dict | None:
        obj = self._objects.get(key, {}).get(ns, {}).get(name)
        self.examined += 1
        return obj

    def list(self, key: Key, ns: str | None) -> Iterator[dict]:
        """The objects of a type, in one namespace or (None) in all; only those are looked at."""
        spaces = self._objects.get(key, {})
        buckets = [spaces.get(ns, {})] if ns is not None else list(spaces.values())
        for bucket in buckets:
            for obj in list(bucket.values()):
                self.examined += 1
                yield obj

    def count(self, key: Key) -> int:
        return sum(len(b) for b in self._objects.get(key, {}).values())

    def by_uid(self, uid: str) -> Ref | None:
        return self._by_uid.get(uid)

    def dependents(self, uid: str) -> list[Ref]:
        return list(self._dependents.get(uid, ()))

    def namespace_contents(self, ns: str) -> list[Ref]:
        return list(self._in_namespace.get(ns, ()))

    def channel(self, key: Key) -> Channel:
        ch = self._channels.get(key)
        if ch is None:
            ch = self._channels[key] = Channel(self.watch_capacity)
        return ch

    # ---- writes -----------------------------------------------------------------------------

    def next_rv(self) -> int:
        self.rv += 1
        return self.rv

    def create(self, key: Key, obj: dict) -> dict:
        """Stores a new object, giving it a uid, a creation time, a resourceVersion and
        generation 1."""
        md = obj.setdefault('metadata', {})
        rv = self.next_rv()
        md['uid'] = str(uuid.uuid4())
        md['creationTimestamp'] = now()
        md['resourceVersion'] = str(rv)
        ref = (key, md.get('namespace', ''), md['name'])
        self._put(ref, obj, None)
        self.channel(key).publish(Event(rv, 'ADDED', obj))
        return obj

    def update(self, key: Key, obj: dict, old: dict) -> dict:
        """Stores a new state of an existing object under a new resourceVersion."""
        rv = self.next_rv()
        obj['metadata']['resourceVersion'] = str(rv)
        ref = (key, meta(obj).get('namespace', ''), meta(obj)['name'])
        self._put(ref, obj, old)
        self.channel(key).publish(Event(rv, 'MODIFIED', obj, old))
        return obj

    def remove(self, key: Key, ns: str, name: str) -> dict | None:
        """Removes an object for good; its DELETED event carries a new resourceVersion."""
        bucket = self._objects.get(key, {}).get(ns, {})
        old = bucket.pop(name, None)
        if old is None:
            return None
        ref = (key, ns, name)
        self._unindex(ref, old)
        rv = self.next_rv()
        gone = {**old, 'metadata': {**meta(old), 'resourceVersion': str(rv)}}
        self.channel(key).publish(Event(rv, 'DELETED', gone, old))
        for hook in self.on_removed:
            hook(ref, old)
        return gone

    def _put(self, ref: Ref, obj: dict, old: dict | None):
        key, ns, name = ref
        if old is not None:
            self._unindex(ref, old)
        self._objects.setdefault(key, {}).setdefault(ns, {})[name] = obj
        self._by_uid[meta(obj)['uid']] = ref
        for uid in owner_uids(obj):
            self._dependents.setdefault(uid, set()).add(ref)
        if ns:
            self._in_namespace.setdefault(ns, set()).add(ref)

    def _unindex(self, ref: Ref, old: dict):
        self._by_uid.pop(meta(old).get('uid'), None)
        for uid in owner_uids(old):
            deps = self._dependents.get(uid)
            if deps is not None:
                deps.discard(ref)
                if not deps:
                    del self._dependents[uid]
        ns = ref[1]
        if ns and ns in self._in_namespace:
            self._in_namespace[ns].discard(ref)
            if not self._in_namespace[ns]:
                del self._in_namespace[ns]
        key = ref[0]
        spaces = self._objects.get(key, {})
        if ns in spaces and not spaces[ns]:
            del spaces[ns]

    def drop_type(self, key: Key):
        """Forgets a type whose CRD is gone (its objects were deleted before)."""
        self._objects.pop(key, None)
