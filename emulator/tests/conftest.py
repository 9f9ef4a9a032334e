"""Fixtures: an emulator on a free loopback port (HTTPS, in a thread of the test process, a
fresh one per test), a client for it, and HTTPS webhook servers."""
import asyncio
import json
import os
import ssl
import sys
import tempfile
import threading

import pytest
import requests
import trustme
import yaml
from aiohttp import web

sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..'))

from kube_emulator.__main__ import kubeconfig  # noqa: E402
from kube_emulator.auth import Auth  # noqa: E402
from kube_emulator.server import Server  # noqa: E402
from kube_emulator.tls import ServingCerts  # noqa: E402

HERE = os.path.dirname(__file__)


class Loop:
    """An event loop in a thread of its own, for servers the tests call synchronously."""

    def __init__(self):
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coroutine):
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(30)

    def stop(self):
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)


async def _serve(app, ssl_context):
    runner = web.AppRunner(app, handler_cancellation=True, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, '127.0.0.1', 0, ssl_context=ssl_context)
    await site.start()
    return runner, site._server.sockets[0].getsockname()[1]


class Client:
    """requests against the emulator: `c.get(path)` -> (status code, JSON body)."""

    def __init__(self, url, ca_file, token):
        self.url = url
        self.session = requests.Session()
        self.session.trust_env = False   # REQUESTS_CA_BUNDLE would replace the CA below
        self.session.verify = ca_file
        if token:
            self.session.headers['Authorization'] = f'Bearer {token}'
        self.last = None

    def request(self, method, path, body=None, content_type='application/json', headers=None, **params):
        data = None if body is None else (body if isinstance(body, str) else json.dumps(body))
        self.last = self.session.request(method, self.url + path, data=data, params=params or None,
                                         headers={'Content-Type': content_type, **(headers or {})}, timeout=30)
        try:
            return self.last.status_code, self.last.json()
        except ValueError:
            return self.last.status_code, self.last.text

    def get(self, path, **params):
        return self.request('GET', path, **params)

    def post(self, path, body, headers=None, **params):
        return self.request('POST', path, body, headers=headers, **params)

    def put(self, path, body, headers=None, **params):
        return self.request('PUT', path, body, headers=headers, **params)

    def patch(self, path, body, kind='merge', headers=None, **params):
        types = {'merge': 'application/merge-patch+json', 'json': 'application/json-patch+json',
                 'apply': 'application/apply-patch+yaml', 'strategic': 'application/strategic-merge-patch+json'}
        return self.request('PATCH', path, body, types[kind], headers=headers, **params)

    def delete(self, path, body=None, **params):
        return self.request('DELETE', path, body, **params)

    def watch(self, path, timeout=5, **params):
        """The events of a watch (as dicts) until the server ends it or `timeout`."""
        params = {'watch': 'true', 'timeoutSeconds': str(timeout), **params}
        resp = self.session.get(self.url + path, params=params, stream=True, timeout=timeout + 10)
        return _Watch(resp)


class _Watch:
    def __init__(self, resp):
        self.resp = resp
        self.lines = resp.iter_lines()

    def next(self):
        for line in self.lines:
            if line:
                return json.loads(line)
        return None

    def take(self, n):
        return [self.next() for _ in range(n)]

    def close(self):
        self.resp.close()


class Emulator:
    def __init__(self, certs, ca_file, auth=None, **options):
        self.loop = Loop()
        self.server = Server(auth or Auth(), **options)
        self.runner, port = self.loop.run(_serve(self.server.app, certs.server_context()))
        self.url = f'https://127.0.0.1:{port}'
        self.server.address = f'127.0.0.1:{port}'
        self.ca_file = ca_file
        self.certs = certs
        self.client = Client(self.url, ca_file, self.server.auth.admin_token)

    def call(self, fn, *args):
        """Runs `fn` on the emulator's loop (to look at its state between requests)."""
        async def run():
            return fn(*args)
        return self.loop.run(run())

    def kubeconfig(self, path):
        with open(path, 'w') as f:
            f.write(kubeconfig(self.url, self.certs.ca_pem(), self.server.auth.admin_token))
        return path

    def stop(self):
        self.loop.run(self.runner.cleanup())
        self.loop.stop()


@pytest.fixture(scope='session')
def certs():
    return ServingCerts()


@pytest.fixture(scope='session')
def ca_file(certs, tmp_path_factory):
    path = tmp_path_factory.mktemp('ca') / 'ca.crt'
    path.write_bytes(certs.ca_pem())
    return str(path)


@pytest.fixture
def make_emulator(certs, ca_file):
    started = []

    def make(**options):
        emu = Emulator(certs, ca_file, **options)
        started.append(emu)
        return emu
    yield make
    for emu in started:
        emu.stop()


@pytest.fixture
def emu(make_emulator):
    return make_emulator()


@pytest.fixture
def api(emu):
    return emu.client


def load(name):
    with open(os.path.join(HERE, 'data', name)) as f:
        return yaml.safe_load(f)


def install_crd(api, crd):
    status, body = api.post('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd)
    assert status == 201, body
    name = crd['metadata']['name']
    for _ in range(100):   # the CRD is established just after the write, as on a cluster
        _, got = api.get(f'/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}')
        if any(c['type'] == 'Established' and c['status'] == 'True'
               for c in (got.get('status') or {}).get('conditions') or []):
            return got
        threading.Event().wait(0.02)
    raise AssertionError(f'CRD {name} not established')


@pytest.fixture
def dms(api):
    """The example operator's CRD, installed: returns the path of its objects in `default`."""
    install_crd(api, load('demomicroservices.yaml'))
    return '/apis/devops.my.domain/v1/namespaces/default/demomicroservices'


def wait_until(check, timeout=5.0):
    """Polls `check` until it returns something true (the emulator's controllers run just
    after the request that triggers them)."""
    import time
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.02)


class WebhookServer:
    """An HTTPS server for webhook tests, with a CA of its own: `handler(review) -> response`."""

    def __init__(self, handler, delay=0.0):
        self.ca = trustme.CA()
        cert = self.ca.issue_cert('127.0.0.1')
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        cert.configure_cert(ctx)
        self.reviews = []
        self.loop = Loop()

        async def handle(request):
            review = await request.json()
            self.reviews.append((request.path_qs, review))
            if delay:
                await asyncio.sleep(delay)
            return web.json_response(handler(review))
        app = web.Application()
        app.router.add_post('/{tail:.*}', handle)
        self.runner, port = self.loop.run(_serve(app, ctx))
        self.url = f'https://127.0.0.1:{port}'

    @property
    def ca_bundle(self) -> str:
        import base64
        return base64.b64encode(self.ca.cert_pem.bytes()).decode()

    def stop(self):
        self.loop.run(self.runner.cleanup())
        self.loop.stop()


@pytest.fixture
def webhook_server():
    started = []

    def make(handler, **kw):
        server = WebhookServer(handler, **kw)
        started.append(server)
        return server
    yield make
    for s in started:
        s.stop()


@pytest.fixture
def tmpdir_path():
    with tempfile.TemporaryDirectory() as d:
        yield d
