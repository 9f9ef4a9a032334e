"""TLS: the emulator serves HTTPS with a certificate of its own CA (made at start with
trustme, PyPI), which the kubeconfig it writes carries, as a real cluster's does: kube-rs
(rustls) and kubectl then verify it. Webhook calls go the other way and verify the
webhook's certificate against the configuration's `caBundle`.
"""
import base64
import ssl

import trustme

HOSTS = ['127.0.0.1', 'localhost']


class ServingCerts:
    def __init__(self):
        self.ca = trustme.CA(organization_name='kube-emulator')
        self.cert = self.ca.issue_cert(*HOSTS)

    def server_context(self) -> ssl.SSLContext:
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.cert.configure_cert(ctx)
        # HTTP/1.1 only (aiohttp): clients that offer h2 fall back to it.
        ctx.set_alpn_protocols(['http/1.1'])
        return ctx

    def ca_pem(self) -> bytes:
        return self.ca.cert_pem.bytes()


def client_context(ca_bundle_b64: str | None) -> ssl.SSLContext:
    """An HTTPS client context that trusts only `caBundle` (base64 PEM), or the system's CAs
    when the configuration has none, as the API server does."""
    if ca_bundle_b64:
        pem = base64.b64decode(ca_bundle_b64).decode()
        return ssl.create_default_context(cadata=pem)
    return ssl.create_default_context()
