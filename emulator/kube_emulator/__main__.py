"""Runs the emulator: python -m kube_emulator --kubeconfig OUT [--port 0] [--auth FILE].

Serves HTTPS on loopback with a CA of its own, writes a kubeconfig (that CA, an admin token,
namespace `default`), then prints `listening https://127.0.0.1:PORT` and serves until killed.
"""
import argparse
import asyncio
import base64
import logging
import signal

from aiohttp import web

from .auth import Auth
from .server import Server
from .tls import ServingCerts


def kubeconfig(url: str, ca_pem: bytes, token: str) -> str:
    ca = base64.b64encode(ca_pem).decode()
    return f"""apiVersion: v1
kind: Config
clusters:
- name: kube-emulator
  cluster:
    server: {url}
    certificate-authority-data: {ca}
users:
- name: kube-emulator-admin
  user:
    token: {token}
contexts:
- name: kube-emulator
  context: {{cluster: kube-emulator, user: kube-emulator-admin, namespace: default}}
current-context: kube-emulator
"""


async def run(args):
    auth = Auth.from_file(args.auth)
    server = Server(auth, watch_capacity=args.watch_capacity, bookmark_interval=args.bookmark_interval,
                    namespace_delay=args.namespace_delay)
    certs = ServingCerts()
    # Cancelling a handler when its client goes away ends abandoned watches at once.
    log = {} if args.access_log else {'access_log': None}
    runner = web.AppRunner(server.app, handler_cancellation=True, **log)
    await runner.setup()
    site = web.TCPSite(runner, '127.0.0.1', args.port, ssl_context=certs.server_context())
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    server.address = f'127.0.0.1:{port}'
    url = f'https://127.0.0.1:{port}'
    if args.kubeconfig:
        with open(args.kubeconfig, 'w') as f:
            f.write(kubeconfig(url, certs.ca_pem(), auth.admin_token))
    print('listening', url, flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await runner.cleanup()


def main():
    p = argparse.ArgumentParser(prog='kube_emulator', description=__doc__)
    p.add_argument('--port', type=int, default=0, help='0: a free port')
    p.add_argument('--kubeconfig', help='where to write a kubeconfig for the emulator')
    p.add_argument('--auth', help='YAML/JSON table of tokens and rules (see auth.py)')
    p.add_argument('--access-log', action='store_true', help='log every request')
    p.add_argument('--watch-capacity', type=int, default=1000,
                   help='events kept per resource type for watches that resume')
    p.add_argument('--namespace-delay', type=float, default=1.0,
                   help='seconds before a deleted namespace is emptied, as by a namespace controller')
    p.add_argument('--bookmark-interval', type=float, default=30.0,
                   help='seconds between BOOKMARK events of an idle watch')
    args = p.parse_args()
    if args.access_log:
        logging.basicConfig(level=logging.INFO, format='%(message)s')
    asyncio.run(run(args))


if __name__ == '__main__':
    main()
