"""OpenAPI v3 (/openapi/v3 and /openapi/v3/apis/GROUP/VERSION), for kubectl.

kubectl 1.32 runs `apply`, `create` and `replace` with `--validate=strict` by default. It
reads /openapi/v3 to learn whether the server validates fields itself (a PATCH operation of
the kind with a `fieldValidation` query parameter); if so it sends `fieldValidation=Strict`
and leaves validation to the server (here: unknown fields of custom resources refused,
schema.py and api.py). Without /openapi/v3 it would need /openapi/v2 in protobuf, and fail
without either; hence this module.

What is served per group version: each kind's schema (a CRD's own schema; for built-in types
an open object, as the emulator does not validate them) tagged with
`x-kubernetes-group-version-kind`, and its paths with their operations and parameters. Patch
operations of built-in types do not list strategic merge patch, so that kubectl's client-side
apply computes those patches from its compiled-in types, as with a server that has no
OpenAPI for them. /openapi/v2 is not served (404).
"""
import hashlib
import json

OBJECT_META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta'
STATUS = 'io.k8s.apimachinery.pkg.apis.meta.v1.Status'
PATCH_TYPES = ['application/json-patch+json', 'application/merge-patch+json', 'application/apply-patch+yaml']


def _query(name: str, description: str) -> dict:
    return {'name': name, 'in': 'query', 'description': description, 'schema': {'type': 'string', 'uniqueItems': True}}


WRITE_PARAMS = [_query('dryRun', 'When present, modifications are not persisted.'),
                _query('fieldManager', 'The name of the actor making the change.'),
                _query('fieldValidation', 'Ignore, Warn or Strict: what to do with unknown fields.')]


def _gv_path(group: str, version: str) -> str:
    return f'apis/{group}/{version}' if group else f'api/{version}'


def schema_name(t) -> str:
    """The component name, as the API server names it: reversed domain for CRDs."""
    if t.crd:
        return '.'.join(reversed(t.group.split('.'))) + f'.{t.version}.{t.kind}'
    group = t.group.split('.')[0] if t.group else 'core'
    return f'io.k8s.api.{group}.{t.version}.{t.kind}'


def _kind_schema(server, t) -> dict:
    gvk = [{'group': t.group, 'version': t.version, 'kind': t.kind}]
    crd = server.api.crd_of(t)
    base = None
    if crd is not None and crd.versions.get(t.version) and crd.versions[t.version].schema:
        base = json.loads(json.dumps(crd.versions[t.version].schema))
    if base is None:
        base = {'type': 'object', 'x-kubernetes-preserve-unknown-fields': True}
    props = dict(base.get('properties') or {})
    props['apiVersion'] = {'type': 'string'}
    props['kind'] = {'type': 'string'}
    props['metadata'] = {'allOf': [{'$ref': f'#/components/schemas/{OBJECT_META}'}], 'default': {}}
    return {**base, 'properties': props, 'x-kubernetes-group-version-kind': gvk}


def _operation(t, action: str, ref: str, extra=()) -> dict:
    op = {'operationId': f'{action}{t.kind}', 'x-kubernetes-action': action,
          'x-kubernetes-group-version-kind': {'group': t.group, 'version': t.version, 'kind': t.kind},
          'parameters': list(extra),
          'responses': {'200': {'description': 'OK', 'content': {'application/json': {'schema': {'$ref': ref}}}}}}
    return op


def gv_document(server, group: str, version: str) -> dict | None:
    types = server.registry.in_group_version(group, version)
    if not types:
        return None
    schemas = {OBJECT_META: {'type': 'object', 'x-kubernetes-preserve-unknown-fields': True},
               STATUS: {'type': 'object', 'x-kubernetes-preserve-unknown-fields': True}}
    paths = {}
    root = '/' + _gv_path(group, version)
    for t in types:
        name = schema_name(t)
        schemas[name] = _kind_schema(server, t)
        ref = f'#/components/schemas/{name}'
        prefix = f'{root}/namespaces/{{namespace}}/{t.plural}' if t.namespaced else f'{root}/{t.plural}'
        body = {'content': {'*/*': {'schema': {'$ref': ref}}}, 'required': True}
        paths[prefix] = {'get': _operation(t, 'list', ref), 'post': {**_operation(t, 'post', ref, WRITE_PARAMS), 'requestBody': body}}
        patch_body = {'content': {c: {'schema': {'type': 'object'}} for c in PATCH_TYPES}, 'required': True}
        patch_params = WRITE_PARAMS + [_query('force', 'Force an apply, taking over conflicting fields.')]
        paths[f'{prefix}/{{name}}'] = {
            'get': _operation(t, 'get', ref),
            'put': {**_operation(t, 'put', ref, WRITE_PARAMS), 'requestBody': body},
            'patch': {**_operation(t, 'patch', ref, patch_params), 'requestBody': patch_body},
            'delete': _operation(t, 'delete', f'#/components/schemas/{STATUS}'),
        }
    return {'openapi': '3.0.0', 'info': {'title': 'Kubernetes (kube-emulator)', 'version': 'v1.32.0'},
            'paths': paths, 'components': {'schemas': schemas}}


def index(server) -> dict:
    paths = {}
    for group, versions in server.registry.groups().items():
        for version in versions:
            gv = _gv_path(group, version)
            doc = gv_document(server, group, version)
            digest = hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:32].upper()
            paths[gv] = {'serverRelativeURL': f'/openapi/v3/{gv}?hash={digest}'}
    return {'paths': paths}


def serve(server, path: str, query) -> dict | None:
    """The document at `path` (/openapi/v3...), or None (404)."""
    if path == '/openapi/v3':
        return index(server)
    prefix = '/openapi/v3/'
    if not path.startswith(prefix):
        return None
    parts = path[len(prefix):].split('/')
    if len(parts) == 2 and parts[0] == 'api':
        return gv_document(server, '', parts[1])
    if len(parts) == 3 and parts[0] == 'apis':
        return gv_document(server, parts[1], parts[2])
    return None
