#!/usr/bin/env python3
"""Creates DemoMicroServices one by one and times each until its Deployment exists.

    operator_load.py KUBECONFIG COUNT TIME_LIMIT_SECONDS [--spec JSON] [--results FILE]

For each resource: take the time, POST it, poll GET on the Deployment of the same name
every few ms until it exists; only then create the next one. Prints p50, p95 and max of
those times, and the API server's own GET round trip at the start and at the end (to tell its
slowness from the operator's). Exits 1 if the time limit runs out first. Standard library only:
it reads the server, its CA and the client certificate from the kubeconfig that
scripts/control-plane writes.

--spec is the resources' spec (default: rbuilder's DemoMicroService; kubebuilder's
deploy-image kind has other fields, see bench/peer.sh). --results writes the figures to FILE
as "name value" lines (milliseconds), for a script to read.
"""

import argparse
import http.client
import json
import math
import re
import ssl
import statistics
import sys
import time
import urllib.parse

NAMESPACE = "default"
POLL_SECONDS = 0.002
# Set by main() from the kubeconfig: the API server's CA and the admin's client certificate.
TLS = None
HEADERS = {"Content-Type": "application/json"}
# One kept-alive connection to the API server, as a client library keeps one: the figures then
# hold no TLS handshake (with a client certificate) per request.
CONNECTION = None
DEFAULT_SPEC = {"image": "stefanprodan/podinfo:6.7.1", "replicas": 1, "port": 9898}


def request(method, url, body=None):
    """Returns the HTTP status of the request (errors included)."""
    global CONNECTION
    data = json.dumps(body).encode() if body is not None else None
    parts = urllib.parse.urlsplit(url)
    for attempt in range(2):
        if CONNECTION is None:
            CONNECTION = http.client.HTTPSConnection(parts.netloc, timeout=60, context=TLS)
        try:
            CONNECTION.request(method, parts.path, body=data, headers=HEADERS)
            response = CONNECTION.getresponse()
            response.read()
            return response.status
        except (http.client.HTTPException, OSError):
            # The server closed the kept-alive connection: once more on a new one.
            CONNECTION.close()
            CONNECTION = None
            if attempt:
                raise
    raise AssertionError("unreachable")


def round_trip_ms(url):
    """Median time of 5 GETs of `url`."""
    times = []
    for _ in range(5):
        started = time.monotonic()
        request("GET", url)
        times.append((time.monotonic() - started) * 1000)
    return statistics.median(times)


def nearest_rank(sorted_values, percent):
    return sorted_values[max(0, math.ceil(percent / 100 * len(sorted_values)) - 1)]


def row(label, value, explanation):
    print(f"{label:<27}{value:>14}   {explanation}", flush=True)


def connect(kubeconfig):
    """Reads the kubeconfig's server, CA and client certificate; returns the server's URL."""
    # scripts/control-plane writes a one-cluster kubeconfig that names its files; no YAML
    # parser needed for its few lines.
    global TLS
    with open(kubeconfig) as file:
        text = file.read()

    def field(name):
        return re.search(rf"^\s*{name}:\s*(\S+)", text, re.M).group(1)

    TLS = ssl.create_default_context(cafile=field("certificate-authority"))
    TLS.load_cert_chain(field("client-certificate"), field("client-key"))
    return field("server")


def resource(name, spec):
    return {
        "apiVersion": "devops.my.domain/v1",
        "kind": "DemoMicroService",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": spec,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kubeconfig")
    parser.add_argument("count", type=int)
    parser.add_argument("time_limit", type=float)
    parser.add_argument("--spec", type=json.loads, default=DEFAULT_SPEC)
    parser.add_argument("--results")
    args = parser.parse_args()
    count, time_limit = args.count, args.time_limit
    server = connect(args.kubeconfig)
    resources = f"{server}/apis/devops.my.domain/v1/namespaces/{NAMESPACE}/demomicroservices"
    deployments = f"{server}/apis/apps/v1/namespaces/{NAMESPACE}/deployments"
    deadline = time.monotonic() + time_limit
    first_round_trip = round_trip_ms(f"{deployments}/absent")

    latencies = []
    for i in range(count):
        name = f"bench-{i:04d}"
        started = time.monotonic()
        status = request("POST", resources, resource(name, args.spec))
        if status != 201:
            sys.exit(f"error: creating {name} returned HTTP {status}")
        while request("GET", f"{deployments}/{name}") != 200:
            if time.monotonic() > deadline:
                sys.exit(f"error: time limit ({time_limit:.0f} s) reached: "
                         f"{len(latencies)} of {count} Deployments appeared")
            time.sleep(POLL_SECONDS)
        latencies.append((time.monotonic() - started) * 1000)

    latencies.sort()
    last_round_trip = round_trip_ms(f"{deployments}/absent")
    row("create -> Deployment p50:", f"{nearest_rank(latencies, 50):.1f} ms",
        f"from just before the POST to the first GET that finds it; half of the {count} were faster")
    row("create -> Deployment p95:", f"{nearest_rank(latencies, 95):.1f} ms",
        "all but the slowest 5% got their Deployment within this")
    row("create -> Deployment max:", f"{latencies[-1]:.1f} ms", "the slowest one")
    row("API server GET round trip:", f"{first_round_trip:.1f} ms",
        "median of 5 GETs (404) before the first create: the API server's own cost per request")
    row("  ... after the creates:", f"{last_round_trip:.1f} ms",
        "the same at the end, with all the objects stored")
    if args.results:
        with open(args.results, "w") as file:
            file.write(f"p50 {nearest_rank(latencies, 50):.1f}\n"
                       f"p95 {nearest_rank(latencies, 95):.1f}\n"
                       f"max {latencies[-1]:.1f}\n"
                       f"rtt_before {first_round_trip:.1f}\n"
                       f"rtt_after {last_round_trip:.1f}\n")


if __name__ == "__main__":
    main()
