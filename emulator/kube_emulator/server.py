"""The HTTP layer (aiohttp): authentication, URL routing to discovery, OpenAPI and the verbs of
api.py, JSON (and apply-patch YAML) bodies, Status errors, Warning headers, and watch streams.
"""
import asyncio
import json
import logging
from dataclasses import dataclass

import yaml
from aiohttp import web

from . import discovery, errors, openapi, patch, tables
from .api import Api, Call
from .auth import ANONYMOUS_PATHS, Auth
from .resources import Registry
from .store import Store, meta
from .watch import as_seen

log = logging.getLogger('kube_emulator')


@dataclass
class Route:
    group: str
    version: str
    plural: str = ''
    namespace: str = ''
    name: str = ''
    subresource: str = ''


def parse_path(path: str) -> Route | None:
    """/api/v1/..., /apis/GROUP/VERSION/...: the resource, namespace, name and subresource.
    `/api/v1/namespaces/NAME[/status|/finalize]` address Namespaces themselves."""
    parts = [p for p in path.split('/') if p]
    if len(parts) >= 2 and parts[0] == 'api':
        route, rest = Route('', parts[1]), parts[2:]
    elif len(parts) >= 3 and parts[0] == 'apis':
        route, rest = Route(parts[1], parts[2]), parts[3:]
    else:
        return None
    if len(rest) >= 3 and rest[0] == 'namespaces' and not (len(rest) == 3 and rest[2] in ('status', 'finalize')):
        route.namespace, rest = rest[1], rest[2:]
    if len(rest) > 3:
        return None
    route.plural = rest[0] if rest else ''
    route.name = rest[1] if len(rest) > 1 else ''
    route.subresource = rest[2] if len(rest) > 2 else ''
    return route


def json_response(body, status=200, warnings=None) -> web.Response:
    resp = web.Response(text=json.dumps(body, separators=(',', ':')), status=status,
                        content_type='application/json')
    for w in (warnings.items if warnings else []):
        resp.headers.add('Warning', '299 - ' + json.dumps(w))
    return resp


def error_response(e: errors.ApiError, warnings=None) -> web.Response:
    return json_response(e.status(), e.code, warnings)


class Server:
    def __init__(self, auth: Auth | None = None, watch_capacity: int = 1000,
                 bookmark_interval: float = 30.0, namespace_delay: float = 1.0):
        self.auth = auth or Auth()
        self.store = Store(watch_capacity)
        self.registry = Registry()
        self.api = Api(self.store, self.registry, self.auth, namespace_delay)
        self.bookmark_interval = bookmark_interval
        self.address = ''
        self.app = web.Application(client_max_size=16 * 1024 * 1024)
        self.app.router.add_route('*', '/{tail:.*}', self.handle)

    async def handle(self, request: web.Request) -> web.StreamResponse:
        user = self.auth.authenticate(request.headers.get('Authorization'))
        if user is False:
            return error_response(errors.unauthorized())
        path = request.path.rstrip('/') or '/'
        if user is None and path not in ANONYMOUS_PATHS:
            return error_response(errors.forbidden(f'forbidden: User "system:anonymous" cannot {request.method.lower()} path "{path}"'))
        try:
            return await self._dispatch(request, path, user)
        except errors.ApiError as e:
            return error_response(e)
        except (asyncio.CancelledError, ConnectionResetError):
            raise
        except Exception as e:   # a bug of the emulator: a Status the client can read, and a trace
            log.exception('%s %s', request.method, request.path_qs)
            return error_response(errors.internal(f'the emulator failed: {type(e).__name__}: {e}'))

    async def _dispatch(self, request, path, user):
        if path in ('/healthz', '/livez', '/readyz'):
            return web.Response(text='ok')
        if path == '/version':
            return json_response(discovery.VERSION)
        if path == '/api':
            return json_response(discovery.core_versions(self.address))
        if path == '/apis':
            return json_response(discovery.group_list(self.registry))
        if path.startswith('/openapi/'):
            doc = openapi.serve(self, path, request.query)
            if doc is None:
                raise errors.ApiError(404, 'NotFound', 'the server could not find the requested resource')
            return json_response(doc)
        parts = [p for p in path.split('/') if p]
        if parts[0] == 'apis' and len(parts) == 2:
            return self._found(discovery.group(self.registry, parts[1]))
        route = parse_path(path)
        if route is None:
            raise errors.ApiError(404, 'NotFound', 'the server could not find the requested resource')
        if not route.plural:
            return self._found(discovery.resource_list(self.registry, route.group, route.version))
        return await self._resource(request, route, user)

    def _found(self, doc):
        if doc is None:
            raise errors.ApiError(404, 'NotFound', 'the server could not find the requested resource')
        return json_response(doc)

    async def _resource(self, request, route: Route, user):
        rt = self.registry.get(route.group, route.version, route.plural)
        if rt is None:
            raise errors.ApiError(404, 'NotFound', 'the server could not find the requested resource')
        if route.subresource and route.subresource not in rt.subresources:
            raise errors.ApiError(404, 'NotFound', 'the server could not find the requested resource')
        if route.subresource and route.subresource != 'status':
            raise errors.method_not_allowed(f'the emulator does not serve the {route.subresource} subresource')
        if route.namespace and not rt.namespaced:
            raise errors.ApiError(404, 'NotFound', 'the server could not find the requested resource')
        params = dict(request.query)
        call = Call(rt, route.namespace if rt.namespaced else '', route.name, route.subresource, params, user,
                    user_agent=request.headers.get('User-Agent', ''))
        method = request.method
        if rt.namespaced and not route.namespace and (route.name or method not in ('GET',)):
            raise errors.ApiError(404, 'NotFound', 'the server could not find the requested resource')
        verb = _verb(method, route, params)
        if verb not in rt.verbs and not (route.subresource and verb in ('get', 'update', 'patch')):
            raise errors.method_not_allowed(f'{verb} is not supported on resources of kind "{route.plural}"')
        as_table = self._table_columns(request, rt)
        if verb == 'watch':
            return await self._watch(request, call, as_table)
        if verb == 'list':
            listed = await self.api.list(call)
            if as_table is not None:
                return json_response(tables.table(as_table, listed['items'], listed['metadata']['resourceVersion'], params.get('includeObject', 'Metadata')))
            return json_response(listed)
        if verb == 'get':
            obj = await self.api.get(call)
            if as_table is not None:
                return json_response(tables.table(as_table, [obj], meta(obj)['resourceVersion'], params.get('includeObject', 'Metadata')))
            return json_response(obj)
        if verb == 'create':
            obj = await self.api.create(call, await _body(request))
            return json_response(obj, 201, call.warnings)
        if verb == 'update':
            return json_response(await self.api.update(call, await _body(request)), 200, call.warnings)
        if verb == 'patch':
            content_type = request.content_type
            if content_type not in patch.KINDS:
                raise errors.unsupported_media_type(content_type)
            obj, created = await self.api.patch(call, await _body(request, content_type == patch.APPLY), content_type)
            return json_response(obj, 201 if created else 200, call.warnings)
        if verb == 'delete':
            obj, status = await self.api.delete(call, await _options(request))
            return json_response(obj, status, call.warnings)
        if verb == 'deletecollection':
            return json_response(await self.api.delete_collection(call, await _options(request)), 200, call.warnings)
        raise errors.method_not_allowed(f'the method {method} is not supported')

    def _table_columns(self, request, rt) -> list[dict] | None:
        """The printer columns if the client asks for a Table of a custom resource, else None."""
        crd = self.api.crd_of(rt)
        if crd is None or not tables.wanted(request.headers.get('Accept', '')):
            return None
        return crd.versions[rt.version].printer_columns

    # ---- watch -----------------------------------------------------------------------------

    async def _watch(self, request, call: Call, as_table=None) -> web.StreamResponse:
        api, rt = self.api, call.rt
        selected = api.matcher(call)

        async def shown(obj):
            obj = (await api.present(rt, [obj]))[0]
            if as_table is None:
                return obj
            return tables.table(as_table, [obj], meta(obj)['resourceVersion'], call.params.get('includeObject', 'Metadata'))
        ns = call.namespace

        def matches(obj):
            return (not ns or meta(obj).get('namespace') == ns) and selected(obj)

        rv_param = call.params.get('resourceVersion', '')
        initial_events = call.params.get('sendInitialEvents') == 'true'
        channel = self.store.channel(rt.key)
        # Subscribing and reading the starting point happen without an await in between, so
        # that no event falls between them.
        subscriber = channel.subscribe(matches)
        try:
            if rv_param in ('', '0') or initial_events:
                start = [('ADDED', o) for o in self.store.list(rt.key, ns or None) if matches(o)]
                expired = None
            else:
                try:
                    since = int(rv_param)
                except ValueError:
                    raise errors.bad_request(f'invalid resource version: {rv_param!r}') from None
                expired = None if channel.can_resume(since) else since
                start = [] if expired else [(t, e.obj) for e in channel.since(since) if (t := as_seen(e, matches))]
            resp = web.StreamResponse(headers={'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked'})
            await resp.prepare(request)
            if expired is not None:
                oldest = channel.evicted_rv + 1
                status = errors.gone(f'too old resource version: {expired} ({oldest})').status()
                await _send(resp, 'ERROR', status)
                return resp
            for type_, obj in start:
                await _send(resp, type_, await shown(obj))
            bookmarks = call.params.get('allowWatchBookmarks') == 'true'
            if initial_events and bookmarks:
                await self._bookmark(resp, rt, {'k8s.io/initial-events-end': 'true'})
            timeout = float(call.params['timeoutSeconds']) if call.params.get('timeoutSeconds') else None
            deadline = asyncio.get_running_loop().time() + timeout if timeout else None
            while True:
                wait = self.bookmark_interval
                if deadline is not None:
                    wait = min(wait, deadline - asyncio.get_running_loop().time())
                    if wait <= 0:
                        break
                try:
                    event = await asyncio.wait_for(subscriber.queue.get(), wait)
                except asyncio.TimeoutError:
                    if bookmarks and (deadline is None or asyncio.get_running_loop().time() < deadline):
                        await self._bookmark(resp, rt)
                    continue
                type_ = as_seen(event, matches)
                if type_:
                    await _send(resp, type_, await shown(event.obj))
            if bookmarks:
                await self._bookmark(resp, rt)
            await resp.write_eof()
            return resp
        except (ConnectionResetError, asyncio.CancelledError):
            raise
        except errors.ApiError as e:
            if 'resp' in locals() and resp.prepared:
                await _send(resp, 'ERROR', e.status())
                return resp
            raise
        finally:
            channel.unsubscribe(subscriber)

    async def _bookmark(self, resp, rt, annotations=None):
        md = {'resourceVersion': str(self.store.rv)}
        if annotations:
            md['annotations'] = annotations
        await _send(resp, 'BOOKMARK', {'apiVersion': rt.api_version, 'kind': rt.kind, 'metadata': md})


async def _send(resp, type_, obj):
    await resp.write(json.dumps({'type': type_, 'object': obj}, separators=(',', ':')).encode() + b'\n')


def _verb(method: str, route: Route, params: dict) -> str:
    if method == 'GET':
        if route.name:
            return 'get'
        return 'watch' if params.get('watch') in ('true', '1') else 'list'
    if method == 'POST' and not route.name:
        return 'create'
    if method == 'PUT' and route.name:
        return 'update'
    if method == 'PATCH' and route.name:
        return 'patch'
    if method == 'DELETE':
        return 'delete' if route.name else 'deletecollection'
    return method.lower()


async def _body(request, yaml_ok=False):
    if request.content_type in ('application/vnd.kubernetes.protobuf', 'application/cbor'):
        # client-go's typed clients (kubectl create namespace, ...) then retry in JSON.
        raise errors.ApiError(415, 'UnsupportedMediaType', 'the body of the request was in an unknown format - accepted media types include: application/json, application/yaml')
    text = await request.text()
    if not text.strip():
        raise errors.bad_request('the request has no body')
    try:
        return json.loads(text)
    except ValueError:
        if yaml_ok:
            try:
                return yaml.safe_load(text)
            except yaml.YAMLError as e:
                raise errors.bad_request(f'error decoding YAML: {e}') from None
        raise errors.bad_request('the body of the request is not valid JSON') from None


async def _options(request) -> dict:
    text = await request.text()
    if not text.strip():
        return {}
    try:
        body = json.loads(text)
    except ValueError:
        raise errors.bad_request('the DeleteOptions are not valid JSON') from None
    return body if isinstance(body, dict) else {}
