#!/usr/bin/env bash
#   bench/operator.sh [PROJECT]
# Prints what the generated example operator (examples/demo-microservice, release build) costs
# at run time: its resident memory idle and with COUNT DemoMicroServices (plus the peak), how
# long a new DemoMicroService waits for its Deployment (p50, p95, max, created one at a time by
# bench/operator_load.py), the manager's CPU time, and the API requests it made per
# DemoMicroService, by method (from its own /metrics: rest_client_requests_total). Nothing is
# asserted.
#
# It runs against the control plane of the end-to-end tests (scripts/control-plane: etcd,
# kube-apiserver and kube-controller-manager of scripts/envtest-assets, on this machine, so they
# share its cores with the manager and the load). kube-controller-manager gives each Deployment
# a ReplicaSet and a Pod (Pending: no kubelet, no scheduler), as a cluster does, so the manager
# watches its Deployments change as on a cluster, but no container runs and no status comes
# from a running Pod. The latencies include the API server's round trip (printed next to them).
# COUNT (default 1000) is the number of DemoMicroServices; TIME_LIMIT (default 900 s) bounds
# the creates.
# PROJECT (default examples/demo-microservice) is the project built and measured instead of the
# example: a variant of it (the same binary name and CRD, since the load is DemoMicroServices),
# e.g. a copy with a change whose cost is in question.
# Needs python3, openssl, curl and the binaries of scripts/envtest-assets (kubectl comes with them).
# Takes a few minutes, mostly the release build; run it on an otherwise idle machine. BUILD=debug
# builds the dev profile instead: quicker where the tests built it already, for the request
# counts (the times, memory and CPU are then not the image's).
set -euo pipefail
# Resolved before the cd below, so that a path relative to the caller's directory works.
project=$(cd "${1:-$(dirname "$0")/../examples/demo-microservice}" && pwd)
cd "$(dirname "$0")/.."
repo=$PWD
count=${COUNT:-1000}
time_limit=${TIME_LIMIT:-900} # the script must end even if the Deployments stop appearing

work=$(mktemp -d)
control_plane='' manager=''
cleanup() {
  if [ -n "$manager" ]; then kill "$manager" 2>/dev/null || true; wait "$manager" 2>/dev/null || true; fi
  if [ -n "$control_plane" ]; then kill "$control_plane" 2>/dev/null || true; wait "$control_plane" 2>/dev/null || true; fi
  rm -rf "$work" # the kubeconfig, etcd's data and the logs with it
}
trap cleanup EXIT
trap 'exit 130' INT TERM # run the EXIT trap on Ctrl-C and kill too

# Build a copy, as a user builds their generated project; the shared target folder reuses the
# dependencies compiled by the tests. Only the manager binary is needed.
cp -r "$project" "$work/demo-microservice"
cd "$work/demo-microservice"
build=${BUILD:-release}
case $build in
  release) CARGO_TARGET_DIR=$repo/target cargo build --release --locked --quiet --bin demo-microservice ;;
  debug) CARGO_TARGET_DIR=$repo/target cargo build --locked --quiet --bin demo-microservice ;;
  *) echo "error: BUILD is release or debug, not $build" >&2; exit 2 ;;
esac
cp "$repo/target/$build/demo-microservice" "$work/manager"

assets=$("$repo/scripts/envtest-assets")
export PATH=$assets:$PATH # kubectl of the API server's version
KUBEBUILDER_ASSETS=$assets "$repo/scripts/control-plane" "$work/control-plane" &
control_plane=$!
for _ in $(seq 1 1200); do
  [ -e "$work/control-plane/ready" ] && break
  kill -0 "$control_plane" 2>/dev/null || { echo "error: the control plane did not start" >&2; exit 1; }
  sleep 0.1
done
export KUBECONFIG=$work/control-plane/kubeconfig
kubectl apply --server-side -f config/crd/bases/ >/dev/null
# The manager exits if the CRD is not served yet.
kubectl wait --for condition=Established crd/demomicroservices.devops.my.domain >/dev/null
# Pods need the namespace's ServiceAccount, which kube-controller-manager creates at its start.
for _ in $(seq 1 100); do
  kubectl get serviceaccount default >/dev/null 2>&1 && break
  sleep 0.1
done

# The metrics are read with the token of a ServiceAccount allowed to (the manager serves them
# authenticated, as deployed).
kubectl create clusterrole bench-metrics-reader --verb get --non-resource-url /metrics >/dev/null
kubectl create clusterrolebinding bench-metrics-reader --clusterrole bench-metrics-reader \
  --serviceaccount default:default >/dev/null
token=$(kubectl create token default --duration 2h)

# Port 0 (or one found free): so that the bench never clashes with a running operator. The
# manager watches all namespaces, as deployed; the resources go to `default`.
metrics_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$work/manager" \
  --metrics-bind-address "127.0.0.1:$metrics_port" --health-probe-bind-address 127.0.0.1:0 \
  --webhook-bind-address 127.0.0.1:0 \
  2>"$work/manager.log" &
manager=$!

kib() { awk -v key="$1:" '$1 == key { print $2 }' "/proc/$manager/status"; }
row() { printf '%-27s%14s   %s\n' "$@"; }
mib() { awk -v kib="$1" 'BEGIN { printf "%.1f MiB", kib / 1024 }'; }
cpu_seconds() { # utime + stime, fields 14 and 15 (the command name in field 2 has no spaces)
  awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f s", ($14 + $15) / hz }' "/proc/$manager/stat"
}

sleep 5
kill -0 "$manager" 2>/dev/null || { echo "error: the manager exited; its log:" >&2; cat "$work/manager.log" >&2; exit 1; }
echo "== demo-microservice ($build, from ${project#"$repo"/}) against kube-apiserver $(kubectl version -o json | python3 -c 'import json, sys; print(json.load(sys.stdin)["serverVersion"]["gitVersion"])') (scripts/control-plane): $count DemoMicroServices, one at a time"
row "idle RSS:" "$(mib "$(kib VmRSS)")" "VmRSS 5 s after start, with nothing to reconcile"
python3 "$repo/bench/operator_load.py" "$KUBECONFIG" "$count" "$time_limit" \
  || { echo "manager log (last lines):" >&2; tail -20 "$work/manager.log" >&2; exit 1; }
# Let the reconciles that follow the last Deployment (status updates) finish.
sleep 2
row "RSS with $count resources:" "$(mib "$(kib VmRSS)")" "VmRSS once all $count Deployments exist (2 s later)"
row "peak RSS:" "$(mib "$(kib VmHWM)")" "VmHWM: the highest VmRSS since the manager started"
row "manager CPU time:" "$(cpu_seconds)" "user + system over the whole run, start included"
curl --silent --show-error --fail --insecure -H "Authorization: Bearer $token" \
  "https://127.0.0.1:$metrics_port/metrics" >"$work/metrics.txt"
requests() { # METHOD (empty: all): the requests the manager made, per DemoMicroService
  awk -v label="${1:+method=\"$1\"}" -v count="$count" '
    index($0, "rest_client_requests_total{") == 1 && index($0, label) > 0 { sum += $NF }
    END { printf "%.2f", sum / count }' "$work/metrics.txt"
}
for method in '' GET POST PATCH PUT DELETE; do
  row "API requests${method:+, $method}:" "$(requests "$method")" \
    "per DemoMicroService (the whole run's rest_client_requests_total / $count, start included)"
done
