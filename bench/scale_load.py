#!/usr/bin/env python3
"""The load and the measurements of bench/scale.sh, against the API server of a kubeconfig.

    scale_load.py create KUBECONFIG COUNT --spec JSON --results FILE [--rate R] [--time-limit S]
    scale_load.py requests KUBECONFIG
    scale_load.py events KUBECONFIG
    scale_load.py delta BEFORE AFTER [--creates N] [--events E]
    scale_load.py restart READYZ_URL METRICS_URL STARTED_FILE COUNT [--time-limit S]

create: watches the Deployments of the namespace `default`, then creates COUNT
DemoMicroServices there (scale-00000, ...), one request after the other on one kept-alive
connection (as fast as the API server answers, or R a second with --rate), and waits until every
one's Deployment is Available (its Available condition True, for its current generation). The
times come from the watch: a Deployment's ADDED event, and the first event that shows it
Available. Writes "name value" lines to FILE: p50, p95, p99 and max of create -> Deployment (from
just before the POST of a DemoMicroService to the watch event of its Deployment, in ms), the time
from the first create to the last, and to all Deployments Available (s).

requests: the API server's own count of the requests it served (apiserver_request_total), as
JSON: {"GROUP/RESOURCE[/SUBRESOURCE] VERB": count}, for the resources an operator of
DemoMicroServices touches (demomicroservices, deployments, events).

events: how many Events regard a DemoMicroService, and their total count (series included), as
"events N" and "occurrences M".

delta: the requests an operator made between two `requests` snapshots, as "name value" lines:
reads (GET, LIST) and writes of DemoMicroServices (any subresource) and of Deployments (not
their status: kube-controller-manager writes that, and never the rest of a Deployment outside a
rollback), less the N creates of DemoMicroServices the bench itself made (--creates), plus E
Event writes (--events: from `events`, since the API server's count of Events mixes the
operator's with those of kube-controller-manager, kube-scheduler and KWOK). WATCH requests are
left out: they are long-running, and counted when they end.

restart: as operator_startup.py, for a manager started just after STARTED_FILE appears: polls
READYZ_URL and METRICS_URL (plain HTTP) every 5 ms and prints, in nanoseconds since the epoch,
"ready NS" (first 200 of /readyz), "first NS" (first controller_runtime_reconcile_total above
0) and "all NS" (that count reaching COUNT: every object reconciled once after the start).

Standard library only; the client certificate comes from the kubeconfig that
scripts/control-plane writes (operator_load.connect).
"""

import argparse
import http.client
import json
import math
import pathlib
import re
import sys
import threading
import time
import urllib.parse

import operator_load

NAMESPACE = "default"


def nearest_rank(sorted_values, percent):
    return sorted_values[max(0, math.ceil(percent / 100 * len(sorted_values)) - 1)]


def get_json(server, path):
    """GETs `path` on a connection of its own; returns the decoded body."""
    parts = urllib.parse.urlsplit(server)
    connection = http.client.HTTPSConnection(parts.netloc, timeout=120, context=operator_load.TLS)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        body = response.read()
        if response.status != 200:
            sys.exit(f"error: GET {path} returned HTTP {response.status}: {body[:200]!r}")
        return json.loads(body) if path != "/metrics" else body.decode()
    finally:
        connection.close()


def is_available(deployment):
    status = deployment.get("status") or {}
    if status.get("observedGeneration", 0) < deployment["metadata"].get("generation", 0):
        return False
    return any(c.get("type") == "Available" and c.get("status") == "True"
               for c in status.get("conditions") or [])


class DeploymentWatch(threading.Thread):
    """Notes when each Deployment of the namespace is first seen, and first seen Available."""

    def __init__(self, server):
        super().__init__(daemon=True)
        self.server = server
        self.added = {}
        self.available = {}
        self.lock = threading.Lock()
        self.error = None
        path = f"/apis/apps/v1/namespaces/{NAMESPACE}/deployments?limit=1"
        self.resource_version = get_json(server, path)["metadata"]["resourceVersion"]

    def run(self):
        try:
            self.watch()
        except Exception as error:  # reported by the main thread
            self.error = error

    def watch(self):
        parts = urllib.parse.urlsplit(self.server)
        while True:
            path = (f"/apis/apps/v1/namespaces/{NAMESPACE}/deployments?watch=true"
                    f"&resourceVersion={self.resource_version}&timeoutSeconds=3600")
            connection = http.client.HTTPSConnection(parts.netloc, timeout=3700,
                                                     context=operator_load.TLS)
            connection.request("GET", path)
            response = connection.getresponse()
            if response.status != 200:
                raise RuntimeError(f"watch returned HTTP {response.status}")
            for line in response:
                now = time.monotonic()
                event = json.loads(line)
                obj = event["object"]
                if event["type"] == "ERROR":
                    raise RuntimeError(f"watch error: {obj.get('message')}")
                name = obj["metadata"]["name"]
                self.resource_version = obj["metadata"]["resourceVersion"]
                with self.lock:
                    self.added.setdefault(name, now)
                    if name not in self.available and is_available(obj):
                        self.available[name] = now
            connection.close()  # the server ended the watch: go on from where it was

    def counts(self):
        with self.lock:
            return len(self.added), len(self.available)


def create(args):
    server = operator_load.connect(args.kubeconfig)
    resources = f"{server}/apis/devops.my.domain/v1/namespaces/{NAMESPACE}/demomicroservices"
    watch = DeploymentWatch(server)
    watch.start()
    created = {}
    deadline = time.monotonic() + args.time_limit
    first = time.monotonic()
    for i in range(args.count):
        name = f"scale-{i:05d}"
        if args.rate:
            pause = first + i / args.rate - time.monotonic()
            if pause > 0:
                time.sleep(pause)
        created[name] = time.monotonic()
        status = operator_load.request("POST", resources, operator_load.resource(name, args.spec))
        if status != 201:
            sys.exit(f"error: creating {name} returned HTTP {status}")
    last = time.monotonic()
    print(f"scale: {args.count} created in {last - first:.1f} s", file=sys.stderr, flush=True)
    reported = 0
    while True:
        added, available = watch.counts()
        if watch.error is not None:
            sys.exit(f"error: the watch of Deployments failed: {watch.error}")
        if available >= args.count:
            break
        if time.monotonic() > deadline:
            sys.exit(f"error: time limit ({args.time_limit:.0f} s) reached: {added} Deployments, "
                     f"{available} Available of {args.count}")
        if time.monotonic() - reported > 30:
            reported = time.monotonic()
            print(f"scale: {added} Deployments, {available} Available", file=sys.stderr,
                  flush=True)
        time.sleep(0.1)
    with watch.lock:
        latencies = sorted((watch.added[name] - started) * 1000 for name, started in created.items())
        all_available = max(watch.available[name] for name in created) - first
    with open(args.results, "w") as file:
        for percent in (50, 95, 99):
            file.write(f"p{percent} {nearest_rank(latencies, percent):.1f}\n")
        file.write(f"max {latencies[-1]:.1f}\n")
        file.write(f"creates {last - first:.2f}\n")
        file.write(f"available {all_available:.2f}\n")


# Verbs that read and verbs that write, as apiserver_request_total names them.
READS = {"GET", "LIST", "WATCH"}
WRITES = {"POST", "PUT", "PATCH", "APPLY", "DELETE", "DELETECOLLECTION"}
SAMPLE = re.compile(r'^apiserver_request_total\{(.*)\} (\S+)$')
LABEL = re.compile(r'(\w+)="([^"]*)"')


def requests(args):
    server = operator_load.connect(args.kubeconfig)
    counts = {}
    for line in get_json(server, "/metrics").splitlines():
        match = SAMPLE.match(line)
        if not match:
            continue
        labels = dict(LABEL.findall(match.group(1)))
        if labels.get("resource") not in ("demomicroservices", "deployments", "events"):
            continue
        key = f"{labels.get('group') or 'core'}/{labels['resource']}"
        if labels.get("subresource"):
            key += f"/{labels['subresource']}"
        key += f" {labels['verb']}"
        counts[key] = counts.get(key, 0) + int(float(match.group(2)))
    json.dump(counts, sys.stdout, sort_keys=True)
    print()


def events(args):
    server = operator_load.connect(args.kubeconfig)
    count = occurrences = 0
    continue_token = ""
    while True:
        path = "/apis/events.k8s.io/v1/events?limit=500"
        if continue_token:
            path += f"&continue={urllib.parse.quote(continue_token)}"
        page = get_json(server, path)
        for event in page["items"]:
            if (event.get("regarding") or {}).get("kind") == "DemoMicroService":
                count += 1
                occurrences += max(1, (event.get("series") or {}).get("count", 1))
        continue_token = page["metadata"].get("continue")
        if not continue_token:
            break
    print(f"events {count}")
    print(f"occurrences {occurrences}")


def delta(args):
    before = json.load(open(args.before))
    after = json.load(open(args.after))
    figures = {"reads": 0, "writes": 0, "writes_dms": 0, "writes_status": 0,
               "writes_deployments": 0, "writes_events": args.events}
    for key, count in after.items():
        count -= before.get(key, 0)
        resource, verb = key.rsplit(" ", 1)
        if resource.startswith("devops.my.domain/demomicroservices"):
            kind = "writes_status" if resource.endswith("/status") else "writes_dms"
        elif resource == "apps/deployments":
            kind = "writes_deployments"
        else:
            continue
        if resource == "devops.my.domain/demomicroservices" and verb == "POST":
            count -= args.creates
        if verb in ("GET", "LIST"):
            figures["reads"] += count
        elif verb in WRITES:
            figures[kind] += count
    figures["writes"] = sum(v for k, v in figures.items() if k.startswith("writes_"))
    for name, value in figures.items():
        print(f"{name} {value}")


def get_plain(url):
    """The body of a plain-HTTP GET, or None if it does not answer 200."""
    parts = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parts.netloc, timeout=2)
    try:
        connection.request("GET", parts.path)
        response = connection.getresponse()
        body = response.read()
        return body.decode() if response.status == 200 else None
    except OSError:
        return None
    finally:
        connection.close()


def reconciles(metrics):
    total = 0.0
    for line in (metrics or "").splitlines():
        if line.startswith("controller_runtime_reconcile_total{"):
            total += float(line.rsplit(" ", 1)[1])
    return total


def restart(args):
    pathlib.Path(args.started_file).touch()
    deadline = time.monotonic() + args.time_limit
    ready = first = None
    while True:
        if time.monotonic() > deadline:
            sys.exit(f"error: not every object reconciled within {args.time_limit:.0f} s "
                     f"(ready: {ready is not None}, first reconcile: {first is not None})")
        if ready is None and get_plain(args.readyz_url) is not None:
            ready = time.time_ns()
        total = reconciles(get_plain(args.metrics_url))
        if first is None and total > 0:
            first = time.time_ns()
        if ready is not None and total >= args.count:
            break
        time.sleep(0.005 if first is None else 0.5)
    print(f"ready {ready}")
    print(f"first {first}")
    print(f"all {time.time_ns()}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    command = commands.add_parser("create")
    command.add_argument("kubeconfig")
    command.add_argument("count", type=int)
    command.add_argument("--spec", type=json.loads, required=True)
    command.add_argument("--results", required=True)
    command.add_argument("--rate", type=float, default=0)
    command.add_argument("--time-limit", type=float, default=3600)
    for name in ("requests", "events"):
        commands.add_parser(name).add_argument("kubeconfig")
    command = commands.add_parser("delta")
    command.add_argument("before")
    command.add_argument("after")
    command.add_argument("--creates", type=int, default=0)
    command.add_argument("--events", type=int, default=0)
    command = commands.add_parser("restart")
    for name in ("readyz_url", "metrics_url", "started_file"):
        command.add_argument(name)
    command.add_argument("count", type=int)
    command.add_argument("--time-limit", type=float, default=900)
    args = parser.parse_args()
    commands = {"create": create, "requests": requests, "events": events, "delta": delta,
                "restart": restart}
    commands[args.command](args)


if __name__ == "__main__":
    main()
