"""Deletion, as the API server and its built-in controllers carry it out.

- An object with finalizers is only marked (`deletionTimestamp`); it goes once an update
  removes its last finalizer.
- Owner-reference garbage collection: when an object goes, its dependents whose owners are
  all gone are deleted (background propagation, the default); dependents that keep another
  owner lose the dangling reference. `propagationPolicy: Foreground` keeps the owner, with
  the `foregroundDeletion` finalizer, until its dependents with `blockOwnerDeletion` are
  gone; `Orphan` removes the owner's references from its dependents and leaves them.
- A Namespace being deleted is `Terminating` until everything in it is gone (each object
  deleted as above, so finalizers hold it up); then it goes.
- A CRD being deleted (finalizer customresourcecleanup.apiextensions.k8s.io) deletes all its
  custom resources; once they are gone, the CRD goes and its types are no longer served.

Like the controllers, the follow-up work runs after the request that caused it (on the event
loop), and only touches the objects it concerns, found through the store's indexes. The
garbage collector runs at once; the namespace controller waits `namespace_delay` seconds
(1 s by default) before emptying a namespace, as a real one takes a moment: a client that
deletes a namespace and then the objects in it (`kubectl delete -k` of a kustomization with
its Namespace first, as `make undeploy` runs) finds them still there, as on a cluster.
"""
import asyncio
import copy

from .store import meta, now

NAMESPACES = ('', 'namespaces')
CRDS = ('apiextensions.k8s.io', 'customresourcedefinitions')
FOREGROUND = 'foregroundDeletion'
CRD_CLEANUP = 'customresourcecleanup.apiextensions.k8s.io'


def later(fn, *args, delay: float = 0):
    """Runs `fn` once the current request is done (and `delay` seconds more), as a controller
    would react to it."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:   # no loop (a plain unit test): at once
        fn(*args)
        return
    if delay:
        loop.call_later(delay, fn, *args)
    else:
        loop.call_soon(fn, *args)


class Lifecycle:
    def __init__(self, api, namespace_delay: float = 1.0):
        self.api = api
        self.namespace_delay = namespace_delay
        self.store = api.store
        self.store.on_removed.append(self._removed)

    # ---- deleting -------------------------------------------------------------------------

    def delete(self, key, ns: str, name: str, policy: str | None = None) -> tuple[dict | None, bool]:
        """Deletes an object: (its last state, True) if it is gone, (its state, False) if it
        waits for finalizers."""
        old = self.store.get(key, ns, name)
        if old is None:
            return None, True
        md = meta(old)
        if policy == 'Orphan':
            self._orphan(md['uid'])
        if md.get('deletionTimestamp'):
            return old, False     # already being deleted: nothing changes
        finalizers = list(md.get('finalizers') or [])
        if policy == 'Foreground' and self.store.dependents(md['uid']) and FOREGROUND not in finalizers:
            finalizers.append(FOREGROUND)
        if key == NAMESPACES:
            return self._terminate_namespace(old), False
        if not finalizers:
            return self.store.remove(key, ns, name), True
        new = copy.deepcopy(old)
        new['metadata'].update(deletionTimestamp=now(), deletionGracePeriodSeconds=0,
                               finalizers=finalizers)
        if 'generation' in md:
            new['metadata']['generation'] = md['generation'] + 1
        stored = self.store.update(key, new, old)
        if FOREGROUND in finalizers:
            later(self._delete_dependents, md['uid'])
        if key == CRDS:
            self.api.crds.terminating(stored)
            later(self._delete_custom_resources, name)
        return stored, False

    def put(self, key, new: dict, old: dict) -> dict:
        """Stores an update; an object being deleted that has lost its last finalizer goes."""
        md = meta(new)
        if md.get('deletionTimestamp') and not md.get('finalizers'):
            self.store.update(key, new, old)
            return self.store.remove(key, md.get('namespace', ''), md['name'])
        return self.store.update(key, new, old)

    def _remove_finalizer(self, key, ns, name, finalizer):
        obj = self.store.get(key, ns, name)
        if obj is None or finalizer not in (meta(obj).get('finalizers') or []):
            return
        new = copy.deepcopy(obj)
        new['metadata']['finalizers'] = [f for f in meta(obj)['finalizers'] if f != finalizer]
        self.put(key, new, obj)

    # ---- after an object is gone -----------------------------------------------------------

    def _removed(self, ref, old):
        key, ns, _ = ref
        uid = meta(old).get('uid')
        if self.store.dependents(uid):
            later(self._collect_dependents, uid)
        for owner_uid in {r.get('uid') for r in meta(old).get('ownerReferences') or []}:
            later(self._release_foreground_owner, owner_uid)
        if ns:
            namespace = self.store.get(NAMESPACES, '', ns)
            if namespace is not None and meta(namespace).get('deletionTimestamp'):
                later(self._finish_namespace, ns)
        crd = self.api.crds.for_key(key)
        if crd is not None and crd.terminating and self.store.count(key) == 0:
            later(self._remove_finalizer, CRDS, '', crd.name, CRD_CLEANUP)
        if key == CRDS:
            self.api.crds.removed(old)

    def _collect_dependents(self, uid):
        """Background garbage collection of the dependents of a removed owner."""
        if self.store.by_uid(uid) is not None:
            return
        for key, ns, name in self.store.dependents(uid):
            dep = self.store.get(key, ns, name)
            if dep is None:
                continue
            refs = meta(dep).get('ownerReferences') or []
            alive = [r for r in refs if self.store.by_uid(r.get('uid')) is not None]
            if not alive:
                self.delete(key, ns, name, 'Background')
            elif len(alive) < len(refs):
                new = copy.deepcopy(dep)
                new['metadata']['ownerReferences'] = alive
                self.put(key, new, dep)

    def _delete_dependents(self, uid):
        for key, ns, name in self.store.dependents(uid):
            self.delete(key, ns, name, 'Background')

    def _release_foreground_owner(self, uid):
        """An owner in foreground deletion goes once no dependent blocks it any more."""
        ref = self.store.by_uid(uid)
        if ref is None:
            return
        owner = self.store.get(*ref)
        if owner is None or FOREGROUND not in (meta(owner).get('finalizers') or []):
            return
        for dkey, dns, dname in self.store.dependents(uid):
            dep = self.store.get(dkey, dns, dname)
            if dep and any(r.get('uid') == uid and r.get('blockOwnerDeletion')
                           for r in meta(dep).get('ownerReferences') or []):
                return
        self._remove_finalizer(*ref, FOREGROUND)

    def _orphan(self, uid):
        for key, ns, name in self.store.dependents(uid):
            dep = self.store.get(key, ns, name)
            if dep is None:
                continue
            new = copy.deepcopy(dep)
            new['metadata']['ownerReferences'] = [r for r in meta(dep).get('ownerReferences') or [] if r.get('uid') != uid]
            if not new['metadata']['ownerReferences']:
                del new['metadata']['ownerReferences']
            self.put(key, new, dep)

    # ---- namespaces ------------------------------------------------------------------------

    def _terminate_namespace(self, old: dict) -> dict:
        new = copy.deepcopy(old)
        new['metadata']['deletionTimestamp'] = now()
        new['metadata']['deletionGracePeriodSeconds'] = 0
        new.setdefault('status', {})['phase'] = 'Terminating'
        stored = self.store.update(NAMESPACES, new, old)
        later(self._empty_namespace, meta(old)['name'], delay=self.namespace_delay)
        return stored

    def _empty_namespace(self, ns: str):
        for key, ons, name in self.store.namespace_contents(ns):
            self.delete(key, ons, name, 'Background')
        self._finish_namespace(ns)

    def _finish_namespace(self, ns: str):
        namespace = self.store.get(NAMESPACES, '', ns)
        if namespace is None or self.store.namespace_contents(ns):
            return
        new = copy.deepcopy(namespace)
        new.setdefault('spec', {})['finalizers'] = [f for f in (namespace.get('spec') or {}).get('finalizers') or [] if f != 'kubernetes']
        if new['spec']['finalizers'] or meta(namespace).get('finalizers'):
            if new != namespace:
                self.store.update(NAMESPACES, new, namespace)
            return
        self.store.remove(NAMESPACES, '', ns)

    # ---- CRDs ------------------------------------------------------------------------------

    def _delete_custom_resources(self, crd_name: str):
        crd = self.api.crds.get(crd_name)
        if crd is None:
            return
        key = (crd.group, crd.plural)
        for obj in list(self.store.list(key, None)):
            self.delete(key, meta(obj).get('namespace', ''), meta(obj)['name'], 'Background')
        if self.store.count(key) == 0:
            self._remove_finalizer(CRDS, '', crd_name, CRD_CLEANUP)
