#!/usr/bin/env bash
#   bench/faults.sh [PROJECT]
# Prints how the generated example operator (examples/demo-microservice, release build, one
# manager with --leader-elect) behaves under load and faults, against the control plane of the
# end-to-end tests (scripts/control-plane: etcd, kube-apiserver and kube-controller-manager on
# this machine):
#
# 1. Every object failing at once: a validating webhook (bench/faults.py, HTTPS on 127.0.0.1)
#    refuses every Deployment the operator writes, and COUNT (default 1000) DemoMicroServices
#    are created, as fast as one client creates them. For FAULT_SECONDS (default 120) each of
#    their reconciles fails. Printed: the requests the manager sends (its own
#    rest_client_requests_total, sampled every second: mean, busiest second, busiest 10 s) and
#    those the API server counts for the operator's resources (apiserver_request_total of
#    DemoMicroServices, Deployments but their status, which kube-controller-manager writes,
#    events.k8s.io Events and Leases; watches left out; sampled every 5 s); the webhook's
#    calls; the Events about the DemoMicroServices.
#    The bound, with the manager's defaults (no client-side limit, as controller-runtime's):
#    one worker, and the controller's retry budget, 100 retries at once then 10 a second, so
#    at most COUNT + 100 + 10 t failed reconciles in the first t seconds (each object's first
#    reconcile is no retry), each a few requests, plus the Lease (a GET and a PUT every 2 s).
#    With MANAGER_ARGS="--kube-api-qps=20 --kube-api-burst=30" (the default before
#    2026-12-06): at most 30 + 21 t requests in any t seconds.
# 2. The fault gone: the webhook configuration is deleted, and the time until every
#    DemoMicroService has its Deployment and a status is printed, with the requests meanwhile.
#    Each object comes back at its next retry: its backoff after the fault (up to 5 minutes, the
#    runtime's LAST_RETRY) and the controller's retry budget decide when.
# 3. The API server killed (SIGKILL) and started again (scripts/control-plane's SIGUSR1 and
#    SIGUSR2) under the running manager: printed are how long it was down, whether the manager
#    kept running and leading, and how long after the API server was back the manager put back
#    RECREATE (default 10) Deployments deleted and made those of RECREATE DemoMicroServices
#    created right after it came back (its watches reconnected); then that every one of the
#    COUNT + RECREATE objects has its Deployment (none lost).
# 4. SIGTERM: how long the manager takes to exit, and whether it released its Lease (the
#    holder empty); kubebuilder's manager Pod has terminationGracePeriodSeconds 10.
#
# PROJECT (default examples/demo-microservice) is the project built and measured instead: a
# copy with another runtime (e.g. the example of an older commit, for the figures before a
# change), with the same binary name and CRD. MANAGER_ARGS are more arguments for the manager
# (e.g. "--kube-api-qps=0" for no client-side limit).
# Nothing is asserted but what the figures need (the control plane up, the objects created);
# the script exits non-zero if a step cannot be measured (a time limit, RECOVERY_LIMIT default
# 900 s, reached).
# Needs python3, openssl and the binaries of scripts/envtest-assets (kubectl comes with them).
# Takes about 10 minutes plus the release build (shared with bench/operator.sh's in
# target/); the machine's other load slows the API server, so run it on an idle one.
set -euo pipefail
# Resolved before the cd below, so that a path relative to the caller's directory works.
project=$(cd "${1:-$(dirname "$0")/../examples/demo-microservice}" && pwd)
cd "$(dirname "$0")/.."
repo=$PWD
count=${COUNT:-1000}
fault_seconds=${FAULT_SECONDS:-120}
recovery_limit=${RECOVERY_LIMIT:-900}
recreate=${RECREATE:-10}
lease=demo-microservice-leader-election # "<operator name>-leader-election", in POD_NAMESPACE

work=$(mktemp -d)
control_plane='' manager='' webhook='' sampler=''
cleanup() {
  for pid in "$sampler" "$webhook" "$manager"; do
    if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  done
  if [ -n "$control_plane" ]; then
    kill "$control_plane" 2>/dev/null || true
    wait "$control_plane" 2>/dev/null || true
  fi
  rm -rf "$work" # the kubeconfig, etcd's data and the logs with it
}
trap cleanup EXIT
trap 'exit 130' INT TERM # run the EXIT trap on Ctrl-C and kill too

now() { date +%s.%N; }
seconds() { awk -v from="$1" -v to="$2" 'BEGIN { printf "%.1f s", to - from }'; }
row() { printf '  %-38s%12s   %s\n' "$@"; }
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
ssl() {
  local out
  out=$(openssl "$@" 2>&1) || { echo "error: openssl $1 failed: $out" >&2; return 1; }
}
# The manager's metric NAME (the sum of its series whose labels contain FILTER).
metric() {
  python3 -c '
import sys, urllib.request
name, labels = sys.argv[2], sys.argv[3]
text = urllib.request.urlopen(f"http://{sys.argv[1]}/metrics", timeout=5).read().decode()
print(int(sum(float(l.rsplit(" ", 1)[1]) for l in text.splitlines()
              if l.startswith(name + "{") and labels in l)))' "127.0.0.1:$metrics_port" "$1" "${2:-}"
}
manager_log() { echo "manager log (last lines):" >&2; tail -20 "$work/manager.log" >&2; }

# Build a copy, as a user builds their generated project; the shared target folder reuses the
# dependencies compiled by the tests. Only the manager binary is needed.
cp -r "$project" "$work/demo-microservice"
(cd "$work/demo-microservice" &&
  CARGO_TARGET_DIR=$repo/target cargo build --release --locked --quiet --bin demo-microservice)
cp "$repo/target/release/demo-microservice" "$work/manager"

assets=$("$repo/scripts/envtest-assets")
export PATH=$assets:$PATH # kubectl of the API server's version
KUBEBUILDER_ASSETS=$assets "$repo/scripts/control-plane" "$work/control-plane" &
control_plane=$!
wait_for_control_plane() {
  for _ in $(seq 1 1200); do
    [ -e "$work/control-plane/ready" ] && return 0
    kill -0 "$control_plane" 2>/dev/null || { echo "error: the control plane stopped" >&2; exit 1; }
    sleep 0.1
  done
  echo "error: the control plane is not ready after 2 minutes" >&2
  exit 1
}
wait_for_control_plane
export KUBECONFIG=$work/control-plane/kubeconfig
kubectl apply --server-side -f "$work/demo-microservice/config/crd/bases/" >/dev/null
kubectl wait --for condition=Established crd/demomicroservices.devops.my.domain >/dev/null
# Pods need the namespace's ServiceAccount, which kube-controller-manager creates at its start.
for _ in $(seq 1 100); do
  kubectl get serviceaccount default >/dev/null 2>&1 && break
  sleep 0.1
done

# The webhook: a CA of its own signs its certificate; the API server trusts that CA for it.
ssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$work/webhook-ca.key"
ssl req -x509 -new -key "$work/webhook-ca.key" -out "$work/webhook-ca.crt" -days 1 \
  -subj /CN=faults-webhook-ca -addext basicConstraints=critical,CA:TRUE \
  -addext keyUsage=critical,keyCertSign,digitalSignature
ssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$work/webhook.key"
ssl req -new -key "$work/webhook.key" -subj /CN=faults-webhook -out "$work/webhook.csr"
printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' >"$work/webhook.ext"
ssl x509 -req -in "$work/webhook.csr" -CA "$work/webhook-ca.crt" -CAkey "$work/webhook-ca.key" \
  -CAcreateserial -days 1 -extfile "$work/webhook.ext" -out "$work/webhook.crt"
webhook_port=$(free_port)
echo 0 >"$work/webhook-calls"
python3 "$repo/bench/faults.py" webhook "$webhook_port" "$work/webhook.crt" "$work/webhook.key" \
  "$work/webhook-calls" 2>"$work/webhook.log" &
webhook=$!
kubectl apply --server-side -f - >/dev/null <<EOF
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: faults
webhooks:
- name: refuse.faults.bench
  clientConfig:
    url: https://127.0.0.1:$webhook_port/validate
    caBundle: $(base64 -w0 "$work/webhook-ca.crt")
  rules:
  - apiGroups: [apps]
    apiVersions: [v1]
    operations: [CREATE, UPDATE]
    resources: [deployments]
  objectSelector:
    matchLabels:
      app.kubernetes.io/managed-by: demo-microservice-operator
  sideEffects: None
  admissionReviewVersions: [v1]
  failurePolicy: Fail
  timeoutSeconds: 5
EOF
# In force once a dry-run of such a Deployment is refused (the API server reads webhook
# configurations from a watch).
probe=$work/probe.yaml
cat >"$probe" <<EOF
apiVersion: apps/v1
kind: Deployment
metadata:
  name: probe
  labels: {app.kubernetes.io/managed-by: demo-microservice-operator}
spec:
  selector: {matchLabels: {app: probe}}
  template:
    metadata: {labels: {app: probe}}
    spec: {containers: [{name: probe, image: probe}]}
EOF
for _ in $(seq 1 100); do
  kubectl create --dry-run=server -f "$probe" 2>&1 | grep -q "refused by bench/faults.sh" && break
  sleep 0.2
done

metrics_port=$(free_port)
# shellcheck disable=SC2086 # MANAGER_ARGS: one argument per word
HOSTNAME=faults POD_NAMESPACE=default "$work/manager" --leader-elect \
  --metrics-bind-address "127.0.0.1:$metrics_port" --metrics-secure=false \
  --health-probe-bind-address 127.0.0.1:0 --webhook-bind-address 127.0.0.1:0 \
  ${MANAGER_ARGS:-} 2>"$work/manager.log" &
manager=$!
for _ in $(seq 1 300); do
  grep -q "became the leader" "$work/manager.log" && break
  kill -0 "$manager" 2>/dev/null || { echo "error: the manager exited" >&2; manager_log; exit 1; }
  sleep 0.1
done
python3 "$repo/bench/faults.py" sample "$KUBECONFIG" "127.0.0.1:$metrics_port" "$work/samples" &
sampler=$!
sleep 6 # a first sample of the API server's metrics, before the load

echo "== demo-microservice (release, from ${project#"$repo"/}${MANAGER_ARGS:+, $MANAGER_ARGS}) against kube-apiserver $(kubectl version -o json | python3 -c 'import json, sys; print(json.load(sys.stdin)["serverVersion"]["gitVersion"])') (scripts/control-plane)"
echo "1. $count DemoMicroServices, each of whose Deployments a webhook refuses, for $fault_seconds s"
calls_before=$(cat "$work/webhook-calls") # the probes'
fault_start=$(now)
python3 "$repo/bench/faults.py" create "$KUBECONFIG" "$count"
created=$(now)
sleep "$(awk -v start="$fault_start" -v now="$created" -v want="$fault_seconds" 'BEGIN { s = start + want - now; print (s > 0 ? s : 0) }')"
fault_end=$(now)
row "objects created in" "$(seconds "$fault_start" "$created")" "by one client, one POST after the other"
python3 "$repo/bench/faults.py" rates "$work/samples" "$fault_start" "$fault_end" "  requests while they fail"
row "webhook calls" "$(($(cat "$work/webhook-calls") - calls_before))" "Deployment writes the API server asked it about"
row "failed reconciles" "$(metric controller_runtime_reconcile_errors_total)" "controller_runtime_reconcile_errors_total"
echo "  Events about the DemoMicroServices:"
python3 "$repo/bench/faults.py" events "$KUBECONFIG"

echo "2. the webhook removed: the time until all $count have their Deployment and a status"
kubectl delete validatingwebhookconfiguration faults >/dev/null
recovery_start=$(now)
while true; do
  read -r objects deployments with_status < <(python3 "$repo/bench/faults.py" progress "$KUBECONFIG")
  [ "$deployments" -ge "$count" ] && [ "$with_status" -ge "$count" ] && break
  if awk -v start="$recovery_start" -v now="$(now)" -v limit="$recovery_limit" 'BEGIN { exit !(now - start > limit) }'; then
    echo "error: after $recovery_limit s, $deployments of $objects Deployments, $with_status statuses" >&2
    manager_log
    exit 1
  fi
  sleep 2
done
recovered=$(now)
row "all reconciled after" "$(seconds "$recovery_start" "$recovered")" "$deployments Deployments, $with_status statuses (polled every 2 s)"
python3 "$repo/bench/faults.py" rates "$work/samples" "$recovery_start" "$recovered" "  requests meanwhile"

echo "3. kube-apiserver killed and started again under the manager"
sleep 10 # the reconciles that follow the last status settle
reconciles_before=$(metric controller_runtime_reconcile_total)
requests_before=$(metric rest_client_requests_total)
python3 "$repo/bench/faults.py" requests "127.0.0.1:$metrics_port" >"$work/requests-before"
kill -USR1 "$control_plane"
killed=$(now)
while [ -e "$work/control-plane/ready" ]; do sleep 0.05; done
kill -USR2 "$control_plane"
wait_for_control_plane
back=$(now)
row "API server down for" "$(seconds "$killed" "$back")" "from SIGKILL to ready again (its start-up)"
if ! kill -0 "$manager" 2>/dev/null; then
  echo "error: the manager exited while the API server was down" >&2
  manager_log
  exit 1
fi
if grep -q "lost the leader-election Lease" "$work/manager.log"; then
  row "manager" "lost its Lease" "renewals failed for 10 s (its renew deadline): it exits, as controller-runtime's does"
else
  row "manager" "kept leading" "still running, Lease kept"
fi
# Its watches resume: Deployments deleted and DemoMicroServices created now are reconciled.
victims=$(kubectl get deployments -o name | awk -v n="$recreate" '/faults-/ && taken++ < n')
# shellcheck disable=SC2086 # one name per word
kubectl delete --wait=false $victims >/dev/null
python3 - "$KUBECONFIG" "$recreate" <<'EOF'
import sys
sys.path.insert(0, "bench")
import operator_load as load
server = load.connect(sys.argv[1])
url = f"{server}/apis/devops.my.domain/v1/namespaces/default/demomicroservices"
for i in range(int(sys.argv[2])):
    status = load.request("POST", url, load.resource(f"faults-after-{i:02d}", load.DEFAULT_SPEC))
    assert status == 201, status
EOF
total=$((count + recreate))
while true; do
  read -r objects deployments with_status < <(python3 "$repo/bench/faults.py" progress "$KUBECONFIG")
  [ "$deployments" -ge "$total" ] && [ "$with_status" -ge "$total" ] && break
  if awk -v start="$back" -v now="$(now)" 'BEGIN { exit !(now - start > 300) }'; then
    echo "error: 300 s after the restart, $deployments of $objects Deployments, $with_status statuses" >&2
    manager_log
    exit 1
  fi
  sleep 0.5
done
reconnected=$(now)
row "reconciled again after" "$(seconds "$back" "$reconnected")" "from the API server's return: $recreate Deployments put back, $recreate new ones made"
row "objects with their Deployment" "$deployments of $objects" "none lost"
row "reconciles meanwhile" "$(($(metric controller_runtime_reconcile_total) - reconciles_before))" "the watches listed again: every object is reconciled"
row "requests meanwhile" "$(($(metric rest_client_requests_total) - requests_before))" "the manager's, from the kill on:"
echo "    $(python3 "$repo/bench/faults.py" requests "127.0.0.1:$metrics_port" "$work/requests-before")"

echo "4. SIGTERM"
kill -TERM "$manager"
terminated=$(now)
status=0
wait "$manager" || status=$?
manager=''
exited=$(now)
holder=$(kubectl get lease "$lease" -o jsonpath='{.spec.holderIdentity}')
row "manager exited after" "$(seconds "$terminated" "$exited")" "status $status"
row "Lease holder" "${holder:-(none)}" "empty: released on the way out"
