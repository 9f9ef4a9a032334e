#!/usr/bin/env python3
"""Times a manager's start: until its /readyz answers 200, and until it reconciles.

    operator_startup.py KUBECONFIG READYZ_URL STARTED_FILE [--first SPEC_JSON]

Run it just before starting the manager: it gets ready (connects, and with --first creates the
DemoMicroService `bench-first` with that spec, which the manager finds when it starts), then
creates STARTED_FILE to say so; the caller then notes the time and starts the manager (so that
this script's own start-up, tens of milliseconds, is not counted). It polls READYZ_URL (plain
HTTP) and, with --first, GETs the Deployment `bench-first` until each answers 200, every 2 ms,
and prints the wall-clock times of those answers in nanoseconds since the epoch (`date +%s%N`'s
clock): "ready NS" and, with --first, "first NS". Exits 1 after 120 s.
"""

import argparse
import http.client
import json
import pathlib
import sys
import time
import urllib.parse

import operator_load

TIME_LIMIT_SECONDS = 120


def answers_200(url):
    """Whether a GET of the plain-HTTP `url` answers 200 (a refused connection is a no)."""
    parts = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parts.netloc, timeout=1)
    try:
        connection.request("GET", parts.path)
        return connection.getresponse().status == 200
    except OSError:
        return False
    finally:
        connection.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kubeconfig")
    parser.add_argument("readyz_url")
    parser.add_argument("started_file")
    parser.add_argument("--first", type=json.loads, metavar="SPEC_JSON")
    args = parser.parse_args()
    server = operator_load.connect(args.kubeconfig)
    namespace = operator_load.NAMESPACE
    deployment = f"{server}/apis/apps/v1/namespaces/{namespace}/deployments/bench-first"
    if args.first is not None:
        resources = f"{server}/apis/devops.my.domain/v1/namespaces/{namespace}/demomicroservices"
        status = operator_load.request("POST", resources,
                                       operator_load.resource("bench-first", args.first))
        if status != 201:
            sys.exit(f"error: creating bench-first returned HTTP {status}")
    pathlib.Path(args.started_file).touch()

    deadline = time.monotonic() + TIME_LIMIT_SECONDS
    ready = first = None
    while ready is None or (args.first is not None and first is None):
        if time.monotonic() > deadline:
            sys.exit(f"error: no answer within {TIME_LIMIT_SECONDS} s "
                     f"(ready: {ready is not None}, first Deployment: {first is not None})")
        if ready is None and answers_200(args.readyz_url):
            ready = time.time_ns()
        waiting_for_first = args.first is not None and first is None
        if waiting_for_first and operator_load.request("GET", deployment) == 200:
            first = time.time_ns()
        time.sleep(operator_load.POLL_SECONDS)
    print(f"ready {ready}")
    if first is not None:
        print(f"first {first}")


if __name__ == "__main__":
    main()
