"""The verbs on resources (get, list, create, update, patch, delete, deletecollection), with
the API server's write pipeline:

    decode -> (custom resources: prune unknown fields, default) -> mutating webhooks ->
    (prune, default again) -> validation (metadata, schema, CEL) -> validating webhooks ->
    managedFields (managed.py) -> conversion to the storage version -> store (with an
    optimistic concurrency check)

A PATCH (or a PUT without resourceVersion) that loses a race with another write during the
webhook calls is retried on the new state, as the API server's GuaranteedUpdate does; a PUT
with a stale resourceVersion is a 409 Conflict.
"""
from __future__ import annotations

import base64
import copy
from dataclasses import dataclass, field

from . import admission as adm
from . import builtin_checks, cel, conversion, crds, errors, managed, objects, patch, schema
from .errors import FieldError, Warnings
from .lifecycle import CRDS, NAMESPACES, Lifecycle
from .resources import REVIEWS, Registry, ResourceType
from .selectors import parse_fields, parse_labels
from .store import Store, meta, now

SYSTEM_NAMESPACES = ('default', 'kube-system', 'kube-public', 'kube-node-lease')

# Field selectors of built-in types beyond metadata.name and metadata.namespace.
BUILTIN_FIELDS = {
    ('', 'pods'): {'spec.nodeName', 'spec.restartPolicy', 'spec.schedulerName', 'spec.serviceAccountName', 'status.phase', 'status.podIP', 'status.nominatedNodeName'},
    ('', 'events'): {'involvedObject.kind', 'involvedObject.namespace', 'involvedObject.name', 'involvedObject.uid', 'involvedObject.apiVersion', 'involvedObject.resourceVersion', 'involvedObject.fieldPath', 'reason', 'reportingComponent', 'source', 'type'},
    ('events.k8s.io', 'events'): {'regarding.kind', 'regarding.namespace', 'regarding.name', 'regarding.uid', 'reason', 'type', 'reportingController'},
    ('', 'secrets'): {'type'},
    ('', 'namespaces'): {'status.phase'},
    ('', 'nodes'): {'spec.unschedulable'},
}

RETRIES = 5


@dataclass
class Call:
    """One request on a resource."""
    rt: ResourceType
    namespace: str
    name: str = ''
    subresource: str = ''
    params: dict = field(default_factory=dict)
    user: object = None
    warnings: Warnings = field(default_factory=Warnings)
    user_agent: str = ''   # names the field manager when the request has no fieldManager

    @property
    def dry_run(self) -> bool:
        return self.params.get('dryRun') == 'All'

    @property
    def key(self):
        return self.rt.key


class Api:
    def __init__(self, store: Store, registry: Registry, auth, namespace_delay: float = 1.0):
        self.store, self.registry, self.auth = store, registry, auth
        self.crds = crds.Served(store, registry)
        self.admission = adm.Admission(store)
        self.lifecycle = Lifecycle(self, namespace_delay)
        for ns in SYSTEM_NAMESPACES:
            self.store.create(NAMESPACES, self._new_namespace({'metadata': {'name': ns}}))

    def crd_of(self, rt: ResourceType) -> crds.Crd | None:
        return self.crds.of(rt)

    # ---- reads -----------------------------------------------------------------------------

    async def present(self, rt: ResourceType, objs: list[dict]) -> list[dict]:
        """Stored objects as the request's version shows them: converted, and defaulted with
        that version's schema (the API server defaults on read too)."""
        crd = self.crd_of(rt)
        if crd is None:
            return objs
        objs = await conversion.convert(crd, objs, rt.version)
        version = crd.versions.get(rt.version)
        if version and version.defaults:
            s = crd.schema(rt.version)
            objs = [schema.default(o, s) for o in objs]
        return objs

    async def get(self, call: Call) -> dict:
        obj = self.store.get(call.key, call.namespace, call.name)
        if obj is None:
            raise errors.not_found(call.rt.plural, call.rt.group, call.name)
        return (await self.present(call.rt, [obj]))[0]

    def matcher(self, call: Call):
        rt = call.rt
        supported = {'metadata.name', 'metadata.namespace'} | BUILTIN_FIELDS.get(rt.key, set())
        crd = self.crd_of(rt)
        if crd and rt.version in crd.versions:
            supported |= set(crd.versions[rt.version].selectable_fields)
        labels = parse_labels(call.params.get('labelSelector'))
        fields = parse_fields(call.params.get('fieldSelector'), supported, crd is not None)
        return lambda obj: labels(obj) and fields(obj)

    async def list(self, call: Call) -> dict:
        matches = self.matcher(call)
        ns = call.namespace if call.rt.namespaced and call.namespace else None
        items = sorted((o for o in self.store.list(call.key, ns) if matches(o)),
                       key=lambda o: (meta(o).get('namespace', ''), meta(o)['name']))
        list_meta = {'resourceVersion': str(self.store.rv)}
        items, list_meta = _paginate(items, call.params, list_meta)
        items = await self.present(call.rt, items)
        if not call.rt.crd:
            # Built-in lists leave the items' apiVersion and kind out, as the API server does.
            items = [{k: v for k, v in o.items() if k not in ('apiVersion', 'kind')} for o in items]
        return {'apiVersion': call.rt.api_version, 'kind': call.rt.kind + 'List',
                'metadata': list_meta, 'items': items}

    # ---- create ----------------------------------------------------------------------------

    async def create(self, call: Call, body, applied: dict | None = None) -> dict:
        """`applied`: the body of the server-side apply that creates the object."""
        rt = call.rt
        obj = self._decode(call, body)
        if rt.key in REVIEWS:
            return self._review(call, obj)
        md = obj['metadata']
        provided = md.get('managedFields', managed.ABSENT)
        for k in objects.SERVER_FIELDS + ('resourceVersion',):
            md.pop(k, None)
        if not md.get('name') and md.get('generateName'):
            md['name'] = objects.generate_name(md['generateName'])
        if rt.namespaced:
            if md.get('namespace') and md['namespace'] != call.namespace:
                raise errors.bad_request('the namespace of the provided object does not match the namespace sent on the request')
            md['namespace'] = call.namespace
            self._check_namespace_open(call.namespace)
        else:
            md.pop('namespace', None)
        call.name = md.get('name', '')
        if rt.generation:
            md['generation'] = 1
        if 'status' in rt.subresources and rt.key not in (NAMESPACES,):
            obj.pop('status', None)
        if rt.key == NAMESPACES:
            obj = self._new_namespace(obj)
        if rt.key == CRDS:
            md['finalizers'] = sorted(set(md.get('finalizers') or []) | {crds.CLEANUP_FINALIZER})
        crd = self.crd_of(rt)
        if crd is not None and crd.terminating:
            raise errors.method_not_allowed('create not allowed while custom resource definition is terminating')
        obj = self._prune_and_default(call, obj)
        request = adm.Request(rt, 'CREATE', call.namespace if rt.namespaced else '', call.name, '', call.user, call.dry_run, {'kind': 'CreateOptions', 'apiVersion': 'meta.k8s.io/v1'})
        obj = await self.admission.mutate(request, obj, None, call.warnings)
        obj = self._prune_and_default(call, obj, warn=False)
        self._validate(call, obj, None)
        await self.admission.validate(request, obj, None, call.warnings)
        obj = managed.with_managed_fields(obj, managed.updated(self._field_write(call, applied), None, obj, provided, applied))
        stored = await self._to_storage(rt, obj)
        if self.store.get(call.key, call.namespace if rt.namespaced else '', call.name) is not None:
            raise errors.already_exists(rt.plural, rt.group, call.name)
        if call.dry_run:
            return obj
        stored = self.store.create(call.key, stored)
        if rt.key == CRDS:
            self.crds.serve(stored)
        return (await self.present(rt, [stored]))[0]

    def _new_namespace(self, obj: dict) -> dict:
        obj = copy.deepcopy(obj)
        obj.setdefault('apiVersion', 'v1')
        obj.setdefault('kind', 'Namespace')
        md = obj.setdefault('metadata', {})
        # Set by the API server since 1.21; webhooks' namespaceSelectors rely on it.
        md['labels'] = {**(md.get('labels') or {}), 'kubernetes.io/metadata.name': md.get('name', '')}
        obj['spec'] = {'finalizers': ['kubernetes']}
        obj['status'] = {'phase': 'Active'}
        return obj

    def _check_namespace_open(self, ns: str):
        namespace = self.store.get(NAMESPACES, '', ns)
        if namespace is None:
            raise errors.not_found('namespaces', '', ns)
        if meta(namespace).get('deletionTimestamp'):
            raise errors.ApiError(403, 'Forbidden', f'unable to create new content in namespace {ns} because it is being terminated',
                                  {'name': ns, 'kind': 'namespaces', 'causes': [{'reason': 'NamespaceTerminating', 'message': f'namespace {ns} is being terminated', 'field': 'metadata.namespace'}]})

    def _review(self, call: Call, obj: dict) -> dict:
        """TokenReview and SubjectAccessReviews: answered, never stored."""
        plural = call.rt.plural
        if plural == 'tokenreviews':
            return self.auth.token_review(obj)
        if plural == 'selfsubjectaccessreviews':
            return self.auth.subject_access_review(obj, call.user)
        if plural == 'localsubjectaccessreviews':
            obj['metadata']['namespace'] = call.namespace
        return self.auth.subject_access_review(obj)

    # ---- update and patch ------------------------------------------------------------------

    async def update(self, call: Call, body) -> dict:
        new = self._decode(call, body)
        if meta(new).get('name') and meta(new)['name'] != call.name:
            raise errors.bad_request(f'the name of the object ({meta(new)["name"]}) does not match the name on the URL ({call.name})')
        wanted_rv = meta(new).get('resourceVersion')
        for _ in range(RETRIES):
            old = self.store.get(call.key, call.namespace, call.name)
            if old is None:
                raise errors.not_found(call.rt.plural, call.rt.group, call.name)
            if wanted_rv and wanted_rv != meta(old)['resourceVersion']:
                raise errors.conflict(call.rt.plural, call.rt.group, call.name, errors.MODIFIED)
            result = await self._write(call, old, copy.deepcopy(new))
            if result is not None:
                return result
            if wanted_rv:
                raise errors.conflict(call.rt.plural, call.rt.group, call.name, errors.MODIFIED)
        raise errors.conflict(call.rt.plural, call.rt.group, call.name, errors.MODIFIED)

    async def patch(self, call: Call, body, content_type: str) -> tuple[dict, bool]:
        """(the object, whether it was created: server-side apply creates)."""
        if content_type == patch.APPLY:
            if not call.params.get('fieldManager'):
                raise errors.invalid(call.rt.kind, call.rt.group, call.name, [FieldError(errors.REQUIRED, 'fieldManager', detail='is required for apply patch')])
            self._check_type(call, body)
            if (body.get('metadata') or {}).get('managedFields') is not None:
                raise errors.bad_request('metadata.managedFields must be nil')
        applied = body if content_type == patch.APPLY else None
        for _ in range(RETRIES):
            old = self.store.get(call.key, call.namespace, call.name)
            if old is None:
                if content_type != patch.APPLY or call.subresource:
                    raise errors.not_found(call.rt.plural, call.rt.group, call.name)
                obj = copy.deepcopy(body)
                obj.setdefault('metadata', {})['name'] = call.name
                try:
                    return await self.create(call, obj, applied), True
                except errors.ApiError as e:
                    if e.reason == 'AlreadyExists':
                        continue   # created meanwhile: apply to it
                    raise
            current = (await self.present(call.rt, [old]))[0]
            new = patch.apply_patch(current, body, content_type)
            wanted_rv = meta(new).get('resourceVersion')
            if wanted_rv and wanted_rv != meta(old)['resourceVersion']:
                raise errors.conflict(call.rt.plural, call.rt.group, call.name, errors.MODIFIED)
            result = await self._write(call, old, new, applied)
            if result is not None:
                return result, False
        raise errors.conflict(call.rt.plural, call.rt.group, call.name, errors.MODIFIED)

    async def _write(self, call: Call, old: dict, new: dict, applied: dict | None = None) -> dict | None:
        """Stores `new` (in the request's version) over `old` (stored); None if `old` changed
        meanwhile (the caller retries). `applied`: the body of a server-side apply."""
        rt = call.rt
        self._check_type(call, new)
        provided = (new.get('metadata') or {}).get('managedFields', managed.ABSENT)
        old_view = (await self.present(rt, [old]))[0]
        new = objects.carry_server_fields(new, old_view)
        new['metadata']['name'] = call.name
        new['metadata'].pop('resourceVersion', None)
        if 'status' in rt.subresources or call.subresource == 'status':
            new = objects.split_status(new, old_view, call.subresource == 'status')
        if rt.key == NAMESPACES:
            new['spec'] = old_view.get('spec') or {}
        new = self._prune_and_default(call, new)
        request = adm.Request(rt, 'UPDATE', call.namespace, call.name, call.subresource, call.user, call.dry_run, {'kind': 'UpdateOptions', 'apiVersion': 'meta.k8s.io/v1'})
        new = await self.admission.mutate(request, new, old_view, call.warnings)
        new = self._prune_and_default(call, new, warn=False)
        self._validate(call, new, old_view)
        await self.admission.validate(request, new, old_view, call.warnings)
        new = managed.with_managed_fields(new, managed.updated(self._field_write(call, applied), old_view, new, provided, applied))
        unchanged_rv = meta(old)['resourceVersion']
        new['metadata']['resourceVersion'] = unchanged_rv
        if objects.same_state(new, old_view):
            return old_view
        if rt.generation and 'generation' in meta(old_view) and objects.content(new) != objects.content(old_view):
            new['metadata']['generation'] = meta(old_view)['generation'] + 1
        if call.dry_run:
            return new
        stored = await self._to_storage(rt, new)
        current = self.store.get(call.key, call.namespace, call.name)
        if current is None or meta(current)['resourceVersion'] != unchanged_rv:
            return None
        result = self.lifecycle.put(call.key, stored, old)
        if rt.key == CRDS and self.store.get(CRDS, '', call.name) is not None:
            self.crds.serve(result)
        return (await self.present(rt, [result]))[0]

    # ---- delete ----------------------------------------------------------------------------

    async def delete(self, call: Call, options: dict) -> tuple[dict, int]:
        rt = call.rt
        old = self.store.get(call.key, call.namespace, call.name)
        if old is None:
            raise errors.not_found(rt.plural, rt.group, call.name)
        pre = options.get('preconditions') or {}
        if pre.get('uid') and pre['uid'] != meta(old)['uid']:
            raise errors.conflict(rt.plural, rt.group, call.name, f'Precondition failed: UID in precondition: {pre["uid"]}, UID in object meta: {meta(old)["uid"]}')
        if pre.get('resourceVersion') and pre['resourceVersion'] != meta(old)['resourceVersion']:
            raise errors.conflict(rt.plural, rt.group, call.name, f'Precondition failed: ResourceVersion in precondition: {pre["resourceVersion"]}, ResourceVersion in object meta: {meta(old)["resourceVersion"]}')
        old_view = (await self.present(rt, [old]))[0]
        request = adm.Request(rt, 'DELETE', call.namespace, call.name, '', call.user, call.dry_run, {'kind': 'DeleteOptions', 'apiVersion': 'meta.k8s.io/v1'})
        await self.admission.validate(request, None, old_view, call.warnings)
        if call.dry_run:
            return old_view, 200
        policy = options.get('propagationPolicy') or call.params.get('propagationPolicy')
        if options.get('orphanDependents') is True:
            policy = 'Orphan'
        obj, gone = self.lifecycle.delete(call.key, call.namespace, call.name, policy)
        if gone:
            return {'kind': 'Status', 'apiVersion': 'v1', 'metadata': {}, 'status': 'Success',
                    'details': {'name': call.name, 'group': rt.group, 'kind': rt.plural, 'uid': meta(old)['uid']}}, 200
        return (await self.present(rt, [obj]))[0], 202

    async def delete_collection(self, call: Call, options: dict) -> dict:
        matches = self.matcher(call)
        ns = call.namespace if call.rt.namespaced and call.namespace else None
        deleted = []
        for obj in [o for o in self.store.list(call.key, ns) if matches(o)]:
            call.name = meta(obj)['name']
            call.namespace = meta(obj).get('namespace', '')
            try:
                await self.delete(call, options)
                deleted.append(obj)
            except errors.ApiError as e:
                if e.code != 404:
                    raise
        return {'apiVersion': call.rt.api_version, 'kind': call.rt.kind + 'List',
                'metadata': {'resourceVersion': str(self.store.rv)}, 'items': await self.present(call.rt, deleted)}

    # ---- the pieces of the pipeline --------------------------------------------------------

    def _field_write(self, call: Call, applied: dict | None) -> managed.Write:
        """The request as the field manager records it (see managed.py)."""
        rt = call.rt
        crd = self.crd_of(rt)
        version = crd.versions.get(rt.version) if crd else None
        return managed.Write(
            manager=call.params.get('fieldManager') or managed.manager_from_user_agent(call.user_agent),
            operation=managed.APPLY if applied is not None else managed.UPDATE,
            api_version=rt.api_version, subresource=call.subresource,
            has_status='status' in rt.subresources,
            schema=(version.schema or {}) if version else managed.BUILTIN, time=now())

    def _check_type(self, call: Call, obj):
        if not isinstance(obj, dict):
            raise errors.bad_request('the body of the request must be a JSON object')
        rt = call.rt
        version, kind = obj.get('apiVersion'), obj.get('kind')
        if version and version != rt.api_version:
            raise errors.bad_request(f'the API version in the data ({version}) does not match the expected API version ({rt.api_version})')
        if kind and kind != rt.kind:
            raise errors.bad_request(f'the kind in the data ({kind}) does not match the expected kind ({rt.kind})')

    def _decode(self, call: Call, body) -> dict:
        self._check_type(call, body)
        obj = copy.deepcopy(body)
        obj['apiVersion'], obj['kind'] = call.rt.api_version, call.rt.kind
        if not isinstance(obj.get('metadata'), dict):
            obj['metadata'] = {}
        return obj

    def _prune_and_default(self, call: Call, obj: dict, warn: bool = True) -> dict:
        """Custom resources: unknown fields pruned (reported per fieldValidation), defaults
        applied. Other types pass as they are."""
        crd = self.crd_of(call.rt)
        s = crd.schema(call.rt.version) if crd else None
        if s is None:
            return obj
        pruned: list[str] = []
        obj = schema.prune(obj, crd.versions[call.rt.version].schema or {}, '', True, pruned)
        if pruned and warn:
            mode = call.params.get('fieldValidation', 'Warn')
            if mode == 'Strict':
                fields = ', '.join(f'unknown field "{p}"' for p in pruned)
                raise errors.bad_request(f'{call.rt.kind} in version "{call.rt.version}" cannot be handled as a {call.rt.kind}: strict decoding error: {fields}')
            if mode != 'Ignore':
                for p in pruned:
                    call.warnings.add(f'unknown field "{p}"')
        return schema.default(obj, s)

    def _validate(self, call: Call, obj: dict, old: dict | None):
        rt = call.rt
        md = obj['metadata']
        errs: list[FieldError] = []
        if old is None:
            errs += objects.check_name(rt.key, md.get('name', ''))
        errs += objects.check_labels(md.get('labels'))
        errs += objects.check_annotations(md.get('annotations'))
        if old is not None:
            errs += objects.check_new_finalizers(old, obj)
        crd = self.crd_of(rt)
        if crd is not None:
            s = crd.schema(rt.version)
            if s is not None:
                schema.validate({k: v for k, v in obj.items() if k not in ('apiVersion', 'kind', 'metadata')}, s, '', errs)
                if not errs:   # CEL rules run on schema-valid objects only, as in the API server
                    errs += cel.check(obj, old, crd.versions[rt.version].schema or {})
        if rt.key == CRDS:
            errs += crds.check(obj)
        errs += builtin_checks.check(rt.key, obj, old)
        if errs:
            raise errors.invalid(rt.kind, rt.group, md.get('name', ''), errs)

    async def _to_storage(self, rt: ResourceType, obj: dict) -> dict:
        crd = self.crd_of(rt)
        if crd is None or crd.storage_version == rt.version:
            return obj
        return (await conversion.convert(crd, [obj], crd.storage_version))[0]


def _paginate(items: list[dict], params: dict, list_meta: dict):
    """`limit` and `continue`: the continue token is the last name returned (namespace/name)."""
    token = params.get('continue')
    if token:
        try:
            after = base64.urlsafe_b64decode(token.encode()).decode()
        except Exception:
            raise errors.bad_request('continue key is not valid') from None
        items = [o for o in items if f'{meta(o).get("namespace", "")}/{meta(o)["name"]}' > after]
    limit = int(params.get('limit') or 0)
    if limit and len(items) > limit:
        last = items[limit - 1]
        key = f'{meta(last).get("namespace", "")}/{meta(last)["name"]}'
        list_meta = {**list_meta, 'continue': base64.urlsafe_b64encode(key.encode()).decode(),
                     'remainingItemCount': len(items) - limit}
        items = items[:limit]
    return items, list_meta
