#!/usr/bin/env python3
"""The helpers of bench/faults.sh: a webhook that refuses, the objects, and the figures.

    faults.py webhook PORT CERT KEY CALLS     refuse every AdmissionReview (HTTPS on 127.0.0.1),
                                              counting the calls into the file CALLS
    faults.py create KUBECONFIG COUNT         create COUNT DemoMicroServices, faults-0000...
    faults.py sample KUBECONFIG METRICS OUT   every second, append the manager's request count
                                              (METRICS: host:port of its plain-HTTP /metrics)
                                              and, every 5 s, the API server's
                                              (apiserver_request_total) to OUT, until killed
    faults.py rates OUT FROM TO LABEL         print the request rates between the times FROM
                                              and TO (seconds since the epoch) from OUT
    faults.py events KUBECONFIG               print the Events of the DemoMicroServices
    faults.py progress KUBECONFIG             print how many DemoMicroServices have a Deployment
                                              and how many have reconciled status
    faults.py requests METRICS [BEFORE]       the manager's requests by method and code (JSON),
                                              or, with BEFORE (that JSON), those since

Standard library only; the API server is reached as bench/operator_load.py reaches it (its
connect and request), with the kubeconfig scripts/control-plane writes.
"""

import http.client
import http.server
import json
import os
import ssl
import sys
import threading
import time
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import operator_load as load  # noqa: E402

NAMESPACE = "default"
# What the DemoMicroService operator sends requests about: its kind, its Deployments, its
# Events and its Lease. (kube-controller-manager, which shares the API server, has no Lease,
# watches Deployments, and writes their status, which apiserver_requests leaves out.)
OPERATOR_RESOURCES = {
    ("devops.my.domain", "demomicroservices"),
    ("apps", "deployments"),
    ("events.k8s.io", "events"),
    ("coordination.k8s.io", "leases"),
}
MESSAGE = "refused by bench/faults.sh: the fault under test"


def webhook(port, cert, key, calls_file):
    calls = [0]
    lock = threading.Lock()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            review = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            answer = {
                "apiVersion": "admission.k8s.io/v1",
                "kind": "AdmissionReview",
                "response": {
                    "uid": review["request"]["uid"],
                    "allowed": False,
                    "status": {"code": 403, "message": MESSAGE},
                },
            }
            body = json.dumps(answer).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            with lock:
                calls[0] += 1
                with open(calls_file, "w") as file:
                    file.write(f"{calls[0]}\n")

        def log_message(self, *_):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", int(port)), Handler)
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(cert, key)
    server.socket = tls.wrap_socket(server.socket, server_side=True)
    server.serve_forever()


def create(kubeconfig, count):
    server = load.connect(kubeconfig)
    url = f"{server}/apis/devops.my.domain/v1/namespaces/{NAMESPACE}/demomicroservices"
    for i in range(int(count)):
        name = f"faults-{i:04d}"
        status = load.request("POST", url, load.resource(name, load.DEFAULT_SPEC))
        if status != 201:
            sys.exit(f"error: creating {name} returned HTTP {status}")


def get_json(url):
    """GET of a JSON document from the API server."""
    parts = urllib.parse.urlsplit(url)
    connection = http.client.HTTPSConnection(parts.netloc, timeout=60, context=load.TLS)
    connection.request("GET", parts.path + (f"?{parts.query}" if parts.query else ""))
    response = connection.getresponse()
    body = response.read()
    connection.close()
    return json.loads(body)


def apiserver_requests(server):
    """apiserver_request_total of the operator's resources, by verb: {verb: count}."""
    parts = urllib.parse.urlsplit(server)
    connection = http.client.HTTPSConnection(parts.netloc, timeout=60, context=load.TLS)
    connection.request("GET", "/metrics")
    text = connection.getresponse().read().decode()
    connection.close()
    by_verb = {}
    for line in text.splitlines():
        if not line.startswith("apiserver_request_total{"):
            continue
        labels, value = line.rsplit(" ", 1)
        fields = dict(
            part.split("=", 1) for part in labels[len("apiserver_request_total{"):-1].split('",')
        )
        fields = {k: v.strip('"') for k, v in fields.items()}
        group, resource = fields.get("group", ""), fields.get("resource", "")
        # kube-controller-manager's Deployment status updates, not the operator's.
        if (group, resource, fields.get("subresource", "")) == ("apps", "deployments", "status"):
            continue
        if (group, resource) in OPERATOR_RESOURCES:
            verb = fields.get("verb", "")
            by_verb[verb] = by_verb.get(verb, 0) + float(value)
    return by_verb


def manager_requests(address):
    """The manager's rest_client_requests_total, all codes and methods together."""
    try:
        with urllib.request.urlopen(f"http://{address}/metrics", timeout=5) as response:
            text = response.read().decode()
    except OSError:
        return None
    return sum(
        float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line.startswith("rest_client_requests_total{")
    )


def requests_by(address, before=None):
    """The manager's requests by method and code, as JSON; with BEFORE (a file of that JSON),
    the requests since, in one line."""
    text = urllib.request.urlopen(f"http://{address}/metrics", timeout=5).read().decode()
    counts = {}
    for line in text.splitlines():
        if line.startswith("rest_client_requests_total{"):
            labels, value = line.rsplit(" ", 1)
            fields = dict(
                part.split("=", 1)
                for part in labels[len("rest_client_requests_total{"):-1].split(",")
            )
            key = f"{fields['method'].strip(chr(34))} {fields['code'].strip(chr(34))}"
            counts[key] = counts.get(key, 0) + float(value)
    if before is None:
        print(json.dumps(counts))
        return
    with open(before) as file:
        first = json.load(file)
    delta = {k: v - first.get(k, 0) for k, v in counts.items() if v - first.get(k, 0) > 0}
    print(", ".join(f"{k} {v:.0f}" for k, v in sorted(delta.items())))


def sample(kubeconfig, metrics, out):
    server = load.connect(kubeconfig)
    next_apiserver = 0.0
    with open(out, "a") as file:
        while True:
            now = time.time()
            record = {"t": now, "manager": manager_requests(metrics)}
            if now >= next_apiserver:
                next_apiserver = now + 5
                try:
                    record["apiserver"] = apiserver_requests(server)
                except (OSError, http.client.HTTPException, ValueError):
                    record["apiserver"] = None  # down (the restart): no sample
            file.write(json.dumps(record) + "\n")
            file.flush()
            time.sleep(max(0.0, now + 1 - time.time()))


def rates(out, start, end, label):
    start, end = float(start), float(end)
    with open(out) as file:
        records = [json.loads(line) for line in file]
    records = [r for r in records if start <= r["t"] <= end]
    manager = [(r["t"], r["manager"]) for r in records if r["manager"] is not None]
    apiserver = [
        (r["t"], sum(v for k, v in r["apiserver"].items() if k != "WATCH"), r["apiserver"])
        for r in records
        if r.get("apiserver")
    ]

    def peak(points, window):
        """The highest rate over `window` seconds (or more: the samples' spacing)."""
        best = 0.0
        for i, (t0, v0) in enumerate(points):
            for t1, v1 in points[i + 1:]:
                if t1 - t0 >= window:
                    best = max(best, (v1 - v0) / (t1 - t0))
                    break
        return best

    def row(name, value, explanation):
        print(f"  {name:<38}{value:>12}   {explanation}")

    print(f"{label}:")
    if len(manager) >= 2:
        total = manager[-1][1] - manager[0][1]
        seconds = manager[-1][0] - manager[0][0]
        row("manager requests", f"{total:.0f}", f"rest_client_requests_total over {seconds:.0f} s")
        row("  mean rate", f"{total / seconds:.1f}/s", "")
        row("  peak rate, 1 s", f"{peak(manager, 1):.1f}/s", "the busiest second")
        row("  peak rate, 10 s", f"{peak(manager, 10):.1f}/s", "the busiest 10 s")
    if len(apiserver) >= 2:
        total = apiserver[-1][1] - apiserver[0][1]
        seconds = apiserver[-1][0] - apiserver[0][0]
        row("API server requests", f"{total:.0f}",
            f"apiserver_request_total of the operator's resources, watches left out, {seconds:.0f} s")
        row("  mean rate", f"{total / seconds:.1f}/s", "")
        row("  peak rate, 5 s", f"{peak([(t, v) for t, v, _ in apiserver], 5):.1f}/s",
            "the busiest of the 5 s samples")
        first, last = apiserver[0][2], apiserver[-1][2]
        verbs = sorted(set(first) | set(last))
        by_verb = ", ".join(
            f"{verb} {last.get(verb, 0) - first.get(verb, 0):.0f}"
            for verb in verbs
            if last.get(verb, 0) - first.get(verb, 0) > 0
        )
        row("  by verb", "", by_verb)


def events(kubeconfig):
    server = load.connect(kubeconfig)
    items = get_json(f"{server}/apis/events.k8s.io/v1/namespaces/{NAMESPACE}/events")["items"]
    ours = [e for e in items if e.get("regarding", {}).get("kind") == "DemoMicroService"]
    counts = [e.get("series", {}).get("count", 1) for e in ours]
    objects = {e["regarding"]["name"] for e in ours}
    per_object = {}
    for event, count in zip(ours, counts):
        name = event["regarding"]["name"]
        per_object[name] = per_object.get(name, 0) + count
    print(f"  {'Event objects':<38}{len(ours):>12}   about {len(objects)} DemoMicroServices")
    print(f"  {'failures they count':<38}{sum(counts):>12}   their series counts added up")
    if per_object:
        print(f"  {'most about one object':<38}{max(per_object.values()):>12}   failures counted")


def progress(kubeconfig):
    server = load.connect(kubeconfig)
    deployments = get_json(f"{server}/apis/apps/v1/namespaces/{NAMESPACE}/deployments")["items"]
    ours = {d["metadata"]["name"] for d in deployments if d["metadata"]["name"].startswith("faults-")}
    objects = get_json(
        f"{server}/apis/devops.my.domain/v1/namespaces/{NAMESPACE}/demomicroservices"
    )["items"]
    with_status = sum(1 for o in objects if o.get("status", {}).get("conditions"))
    print(f"{len(objects)} {len(ours)} {with_status}")


if __name__ == "__main__":
    command, arguments = sys.argv[1], sys.argv[2:]
    {
        "webhook": webhook,
        "create": create,
        "sample": sample,
        "rates": rates,
        "events": events,
        "progress": progress,
        "requests": requests_by,
    }[command](*arguments)
