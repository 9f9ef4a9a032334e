# rbuilder's CI layer over ../shared/fakeapi, the API emulator (kmock 0.8 plus a shim), for two
# gaps that stop a generated operator's end-to-end flow there. It changes the emulator, never
# the operator: generated code runs unmodified, as against a real cluster.
#
#   1. Namespace objects: kmock reads `/api/v1/namespaces[/NAME]` as the prefix of a namespaced
#      path, so creating a Namespace fails with a 500 and get/delete return 404. Without them,
#      `make deploy` (which creates `<project>-system`) and the e2e tests' own namespaces fail.
#   2. Constant cost per request: kmock keeps every request it served and, to route a new one,
#      re-scans that history once per registered reaction, so each request costs more than the
#      one before (3 ms at first, 60+ ms after ~600 requests). Routing only needs the requests
#      in flight; the rest of the history is kept by nobody here.
#
# Usage (what scripts/fakeapi/start.sh runs): python patched.py FAKEAPI_PY [PORT]
import runpy
import sys

from kmock._internal import parsing

# Subresources of a Namespace; a namespaced resource type is never named like these.
NAMESPACE_SUBRESOURCES = {'status', 'finalize'}
_parse_path = parsing.parse_path


def parse_path(path: str) -> parsing.ParsedPath:
    """kmock's parser, except that `/api/v1/namespaces`, `.../namespaces/NAME` and
    `.../namespaces/NAME/{status,finalize}` address Namespace objects themselves."""
    parts = path.strip('/').split('/')
    if parts[:3] == ['api', 'v1', 'namespaces'] and (
            len(parts) <= 4 or (len(parts) == 5 and parts[4] in NAMESPACE_SUBRESOURCES)):
        name = parts[3] if len(parts) > 3 else None
        subresource = parts[4] if len(parts) > 4 else None
        return parsing.ParsedPath('', 'v1', 'namespaces', None, name, subresource)
    return _parse_path(path)


class InFlight:
    """Stands in for kmock's request history: remembers only the requests being served (the
    router looks a new request up in it by identity), while `len` still counts them all."""

    def __init__(self):
        self._served = 0
        self._live = {}

    def append(self, request):
        self._served += 1
        self._live[id(request)] = request

    def discard(self, request):
        self._live.pop(id(request), None)

    def __len__(self):
        return self._served

    def __iter__(self):
        return iter(list(self._live.values()))


def patch(module):
    base = module['KubeFake']

    class PatchedFake(base):
        def __attrs_post_init__(self):
            super().__attrs_post_init__()
            self._requests = InFlight()

        async def _handle(self, request):
            try:
                return await super()._handle(request)
            finally:
                self._requests.discard(request)

    PatchedFake.__name__ = base.__name__
    return PatchedFake


def main():
    fakeapi_py, *port = sys.argv[1:]
    parsing.parse_path = parse_path
    sys.argv = [fakeapi_py, *port]   # fakeapi.py reads its port from argv
    module = runpy.run_path(fakeapi_py, run_name='fakeapi')
    module['main'].__globals__['KubeFake'] = patch(module)
    import asyncio
    asyncio.run(module['main']())


if __name__ == '__main__':
    main()
