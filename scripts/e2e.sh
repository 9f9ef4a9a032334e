#!/usr/bin/env bash
# End to end: generated operators against a real Kubernetes control plane on this machine:
# etcd, kube-apiserver, kube-controller-manager and kube-scheduler, started by
# scripts/control-plane from the binaries of scripts/envtest-assets (built from their Go modules
# the first time, then cached), kubectl of the same version, and two nodes simulated by KWOK
# (scripts/kwok; CONTROL_PLANE_NODES). There is no kubelet and no container engine: no image is
# built or run, but the scheduler binds each Pod to a node and KWOK reports it Running and
# Ready (tools/kwok/stages.yaml), so Deployments become Available and roll out as on a cluster.
# The controllers of kube-controller-manager are real: Deployments get ReplicaSets and Pods,
# owned objects are garbage collected, deleted namespaces are emptied, ServiceAccounts get
# tokens.
#   1. `make test-e2e` of examples/demo-microservice (each test in a namespace of its own, which
#      is gone after the test: the sample's Deployment becomes Available and its status says
#      so, an image change rolls out to a new ReplicaSet, a Deployment scaled by hand is left
#      alone when spec.replicas is unset) and of a plain `create api` project (in an existing
#      namespace, E2E_NAMESPACE);
#   2. the Makefile flow a user follows: install, run (the sample becomes a Deployment, found by
#      its short name too, which gets a ReplicaSet and a Running Pod; deleting the sample removes
#      all three, and `--cascade=orphan` keeps the Deployment, freed of its owner),
#      build-installer, uninstall, deploy (the manager's Pod passes the namespace's restricted
#      Pod Security admission), undeploy;
#   3. what the API server refuses or fills in, through the example's CRD, with kube-apiserver's
#      own messages: a negative spec.replicas, a 70-character name (the CRD's CEL rule), an
#      unknown field (kubectl's strict field validation), a missing spec.image; an omitted
#      spec.port comes back with the CRD's default;
#   3b. two replicas of the example's manager with --leader-elect (two processes): the leader
#      killed with SIGKILL in the middle of a batch of creates is replaced by the standby once
#      its Lease has expired (at most 15 + 2 s and a margin, never before the Lease expired),
#      which settles the creates, edits and deletions (finalizers) made meanwhile; the new
#      leader stopped with SIGTERM releases the Lease and a third replica leads at once;
#   4. the manager of `make deploy` with only its ServiceAccount's permissions (a token of the
#      ServiceAccount deploy creates): leader election, reconciling, Events, the webhooks, and
#      its authenticated metrics: a ServiceAccount bound to the project's metrics-reader
#      ClusterRole reads them, one without the binding gets 403, a bad token or none 401;
#   5. the example's webhooks, called by the API server: an image without a tag is refused with
#      the validator's message, a created DemoMicroService gets the defaulter's label; and a
#      conversion webhook: the plain project's Guestbook, created as v1, read as v2. No container
#      runs and no Service is reachable, so this harness points the webhook configurations at the
#      manager run on this machine (clientConfig.url, with a certificate made here); the
#      operator's code and manifests know nothing of it;
#   6. a built-in type's webhooks (a Pod defaulter and a validator of deletions, as a user
#      writes them): Pods are seen everywhere except in kube-system and the manager's
#      namespace, so with the manager down Pods can still be created there;
#   7. conversion between versions with different fields (the example's kind and a plain v2):
#      a write through v2 keeps v1's image.
# Needs cargo, make, python3 with target/venv (`make tools`: PyYAML), openssl, and go the first
# time (scripts/envtest-assets). Users run `make test-e2e` in a generated project against any
# cluster (kind, k3d, ...) instead.
set -euo pipefail
cd "$(dirname "$0")/.."

repo=$PWD
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$repo/target}
case $CARGO_TARGET_DIR in /*) ;; *) CARGO_TARGET_DIR=$repo/$CARGO_TARGET_DIR ;; esac
# rbuilder itself, built before the settings below, with the caller's: as `cargo test` (make
# test) built it already, so nothing is compiled again.
cargo build --quiet --bin rbuilder
rbuilder=$CARGO_TARGET_DIR/debug/rbuilder
# rbuilder's own target folder, which tests/generated.rs builds the same projects in, so that
# the dependencies compiled there (and for rbuilder itself) are reused here. One-shot builds:
# no incremental data and no debug info (gigabytes per project, and slower links), which
# change nothing a test looks at.
export CARGO_INCREMENTAL=0 CARGO_PROFILE_DEV_DEBUG=0
assets=$(scripts/envtest-assets)
# kubectl of the API server's version (the one on PATH may be several minor versions older).
export PATH=$assets:$PATH
python=${E2E_PYTHON:-$repo/target/venv/bin/python}
work=$(mktemp -d)
control_plane_dir=$work/control-plane
KUBEBUILDER_ASSETS=$assets CONTROL_PLANE_NODES=2 scripts/control-plane "$control_plane_dir" &
control_plane=$!
cleanup() {
  kill "$control_plane" 2>/dev/null || true
  wait "$control_plane" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
passed=0
# Each line says when (seconds since the script started): where the minutes go.
pass() { passed=$((passed + 1)); echo "e2e: ok [${SECONDS}s]: $*"; }
fail() { echo "e2e: FAILED: $*" >&2; echo "e2e: $passed passed, 1 failed"; exit 1; }
for _ in $(seq 1 1200); do
  [ -e "$control_plane_dir/ready" ] && break
  kill -0 "$control_plane" 2>/dev/null || fail "the control plane did not start (see above)"
  sleep 0.1
done
[ -e "$control_plane_dir/ready" ] || fail "the control plane was not ready within 120 s"
export KUBECONFIG=$control_plane_dir/kubeconfig
kubectl version

# eventually WHAT COMMAND...: runs COMMAND until it succeeds, for 60 s at most, else fails
# saying that WHAT did not happen.
eventually() {
  local what=$1
  shift
  for _ in $(seq 1 240); do
    "$@" && return 0
    sleep 0.25
  done
  fail "$what (still not so after 60 s)"
}
gone() { ! kubectl get "$@" >/dev/null 2>&1; }
# controlled KIND OWNER_KIND OWNER_NAME: "name phase" of each object of KIND (in the current
# namespace) whose controller, by its owner references, is OWNER_KIND OWNER_NAME.
controlled() {
  kubectl get "$1" -o jsonpath='{range .items[*]}{.metadata.name} {.metadata.ownerReferences[?(@.controller==true)].kind}/{.metadata.ownerReferences[?(@.controller==true)].name} {.status.phase}{"\n"}{end}' \
    | awk -v owner="$2/$3" '$2 == owner { print $1, $3 }'
}
# A namespace's Pods need its ServiceAccount "default" (the ServiceAccount admission plugin),
# which kube-controller-manager creates shortly after the namespace.
has_default_service_account() { kubectl -n "$1" get serviceaccount default >/dev/null 2>&1; }

echo "== e2e: examples/demo-microservice"
cp -r examples/demo-microservice "$work/demo-microservice"
(cd "$work/demo-microservice" && make test-e2e)
# The harness deleted its namespace; kube-controller-manager empties it, then it goes.
no_test_namespace() {
  [ -z "$(kubectl get namespaces -l app.kubernetes.io/created-by=demo-microservice-e2e -o name)" ]
}
eventually "the test's namespace to be deleted" no_test_namespace
pass "make test-e2e of examples/demo-microservice, its namespace deleted afterwards"

echo "== e2e: a plain create api project"
mkdir "$work/guestbook-operator"
(
  cd "$work/guestbook-operator"
  "$rbuilder" init --domain my.domain >/dev/null
  "$rbuilder" create api --group devops --kind Guestbook >/dev/null
  # For clusters where the tests may not create namespaces.
  E2E_NAMESPACE=default make test-e2e
)
pass "make test-e2e of a plain create api project"

echo "== the Makefile flow: install, run, build-installer, uninstall, deploy, undeploy"
cd "$work/demo-microservice"
run=''
start_manager() {
  setsid make run >"$work/run.log" 2>&1 &
  run=$!
}
stop_manager() {
  kill -- -"$run" 2>/dev/null || true
  wait "$run" 2>/dev/null || true
  run=''
}
trap 'if [ -n "$run" ]; then stop_manager; fi; cleanup' EXIT
sample=demomicroservice-sample
# Applies the sample and waits for the running manager to make it a Deployment.
sample_becomes_a_deployment() {
  kubectl apply -k config/samples
  for _ in $(seq 1 240); do
    kubectl get deployment "$sample" >/dev/null 2>&1 && break
    sleep 0.5
  done
  kubectl get deployment "$sample" -o jsonpath='{.spec.template.spec.containers[0].image}{"\n"}' \
    || { echo "the manager did not create the Deployment; its log:"; cat "$work/run.log"; fail "the sample became no Deployment"; }
  kubectl get dms
}

make install
kubectl wait --for condition=Established crd/demomicroservices.devops.my.domain
pass "make install"

echo "== what the API server refuses or fills in (the example's CRD)"
# Runs kubectl apply on stdin, which must fail with a message containing each argument (each
# within one line).
refused() {
  local expected out
  if out=$(kubectl apply -f - 2>&1); then
    fail "the API server accepted what it refuses ($1): $out"
  fi
  for expected in "$@"; do
    grep -qF -- "$expected" <<<"$out" || fail "expected '$expected', got: $out"
  done
  echo "refused: $out"
}
dms() { # NAME SPEC_LINES...
  printf 'apiVersion: devops.my.domain/v1\nkind: DemoMicroService\nmetadata:\n  name: %s\nspec:\n' "$1"
  shift
  printf '  %s\n' "$@"
}
dms negative image:\ example.com/app:1 'replicas: -1' | refused \
  'The DemoMicroService "negative" is invalid: spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0'
long_name=$(printf 'a%.0s' $(seq 1 70))
dms "$long_name" image:\ example.com/app:1 | refused \
  "The DemoMicroService \"$long_name\" is invalid: <nil>: Invalid value: metadata.name must be at most 63 characters (it labels the Deployment)"
dms unknown image:\ example.com/app:1 'colour: blue' | refused \
  'DemoMicroService in version "v1" cannot be handled as a DemoMicroService: strict decoding error: unknown field "spec.colour"'
# The API server names every failed check, one per line; the CEL rules are not run on an
# object that fails the schema.
dms no-image 'replicas: 1' | refused \
  'The DemoMicroService "no-image" is invalid: ' '* spec.image: Required value'
dms defaulted image:\ example.com/app:1 | kubectl apply -f -
port=$(kubectl get dms defaulted -o jsonpath='{.spec.port}')
[ "$port" = 9898 ] || fail "spec.port was not defaulted to 9898 (the CRD's default): '$port'"
kubectl delete dms defaulted
pass "invalid DemoMicroServices refused with the API server's messages; spec.port defaulted"

echo "== two replicas: the leader killed (SIGKILL) in the middle of a batch, then stopped (SIGTERM)"
# Two manager processes of the example with --leader-elect, as two replicas of its Deployment
# would run: one leads, the other waits for the Lease. The leader is killed while objects are
# being created, edited and deleted; the standby must take over once the Lease has expired
# (15 s, controller-runtime's LeaseDuration, plus a retry period of 2 s) and settle all of it.
# Then the new leader gets SIGTERM: it releases the Lease on its way out, and a third replica
# must lead at once.
make build >/dev/null
failover=failover
kubectl create namespace "$failover"
replicas=() # the managers' process ids, by number
trap 'kill "${replicas[@]}" 2>/dev/null || true; if [ -n "$run" ]; then stop_manager; fi; cleanup' EXIT
# replica N: starts manager number N, its log in $work/replica-N.log.
replica() {
  KUBECONFIG=$KUBECONFIG POD_NAMESPACE=$failover "$CARGO_TARGET_DIR/debug/demo-microservice" \
    --leader-elect --enable-webhooks=false --metrics-bind-address=0 \
    --health-probe-bind-address=0 >"$work/replica-$1.log" 2>&1 &
  replicas[$1]=$!
}
# identity N: the Lease identity of replica N, from its log.
identity() { sed -n 's/.*waiting for leadership.*identity="\{0,1\}\([^" ]*\).*/\1/p' "$work/replica-$1.log" | head -n 1; }
lease() { kubectl -n "$failover" get lease demo-microservice-leader-election -o jsonpath="{.spec.$1}" 2>/dev/null; }
leads() { [ -n "$(identity "$1")" ] && [ "$(lease holderIdentity)" = "$(identity "$1")" ]; }
waits() { [ -n "$(identity "$1")" ]; }
# deployments: "name image" of each Deployment in the namespace, sorted.
deployments() {
  kubectl -n "$failover" get deployments \
    -o jsonpath='{range .items[*]}{.metadata.name} {.spec.template.spec.containers[0].image}{"\n"}{end}' | sort
}
# settled: the Deployments are those expected, and no DemoMicroService but those expected is
# left (a deleted one stays until its finalizer's cleanup has run).
settled() {
  [ "$(deployments)" = "$(sort "$work/expected")" ] \
    && ! kubectl -n "$failover" get dms -o name | grep -qvxFf "$work/expected-dms"
}
replica 1
eventually "replica 1 to lead" leads 1
replica 2
eventually "replica 2 to wait for the Lease" waits 2
: >"$work/expected"
: >"$work/expected-dms"
# 10 objects settled before the fault: 5 to be edited and 5 to be deleted while no one leads.
for n in $(seq 1 10); do
  dms "before-$n" 'image: example.com/app:1' | kubectl -n "$failover" apply -f - >/dev/null
done
for n in $(seq 1 10); do
  echo "before-$n example.com/app:1" >>"$work/expected"
  echo "demomicroservice.devops.my.domain/before-$n" >>"$work/expected-dms"
done
eventually "the 10 objects of the first leader to have their Deployments" settled
# The batch: 30 creates, one client, in the background; the leader is killed after the 10th.
(for n in $(seq 1 30); do
  dms "batch-$n" 'image: example.com/app:1' | kubectl -n "$failover" apply -f - >/dev/null
  if [ "$n" = 10 ]; then touch "$work/batch-10"; fi
done) &
batch=$!
for _ in $(seq 1 240); do [ -e "$work/batch-10" ] && break; sleep 0.25; done
killed_at=$(date +%s.%N)
kill -KILL "${replicas[1]}"
wait "${replicas[1]}" 2>/dev/null || true
last_renew=$(lease renewTime)
for n in $(seq 1 5); do
  kubectl -n "$failover" patch dms "before-$n" --type merge -p '{"spec":{"image":"example.com/app:2"}}' >/dev/null
  sed -i "s|^before-$n .*|before-$n example.com/app:2|" "$work/expected"
done
for n in $(seq 6 10); do
  kubectl -n "$failover" delete dms "before-$n" --wait=false >/dev/null
  sed -i "/^before-$n /d" "$work/expected"
  sed -i "\|/before-$n\$|d" "$work/expected-dms"
done
wait "$batch"
for n in $(seq 1 30); do
  echo "batch-$n example.com/app:1" >>"$work/expected"
  echo "demomicroservice.devops.my.domain/batch-$n" >>"$work/expected-dms"
done
eventually "replica 2 to lead after the leader was killed" leads 2
took_over=$(awk -v from="$killed_at" -v to="$(date +%s.%N)" 'BEGIN { printf "%.1f", to - from }')
awk -v t="$took_over" 'BEGIN { exit !(t <= 22) }' \
  || fail "replica 2 took the Lease $took_over s after the leader was killed (at most 15 + 2 s and a margin)"
# Never two leaders: the Lease changed hands only once the dead leader's had expired.
"$python" - "$last_renew" "$(lease acquireTime)" "$(lease leaseDurationSeconds)" <<'PY' \
  || fail "replica 2 took the Lease before the dead leader's had expired"
import sys
from datetime import datetime
renewed, acquired, duration = sys.argv[1], sys.argv[2], float(sys.argv[3])
parse = lambda t: datetime.fromisoformat(t.replace("Z", "+00:00"))
gap = (parse(acquired) - parse(renewed)).total_seconds()
print(f"the Lease: last renewed by the dead leader {renewed}, taken {gap:.1f} s later")
sys.exit(0 if gap >= duration else 1)
PY
eventually "every create, edit and deletion made around the fault to settle" settled
pass "a leader killed with SIGKILL: the standby led ${took_over} s later and settled 30 creates, 5 edits and 5 deletions (finalizers run)"
replica 3
eventually "replica 3 to wait for the Lease" waits 3
stopped_at=$(date +%s.%N)
kill -TERM "${replicas[2]}"
eventually "replica 3 to lead once replica 2 was stopped" leads 3
took_over=$(awk -v from="$stopped_at" -v to="$(date +%s.%N)" 'BEGIN { printf "%.1f", to - from }')
awk -v t="$took_over" 'BEGIN { exit !(t <= 5) }' \
  || fail "replica 3 took the Lease $took_over s after replica 2's SIGTERM (its Lease released: at once)"
wait "${replicas[2]}" || fail "replica 2 exited with $? on SIGTERM; its log: $(tail -20 "$work/replica-2.log")"
grep -q "released the Lease" "$work/replica-2.log" || fail "replica 2 did not release its Lease: $(tail -20 "$work/replica-2.log")"
dms after-term 'image: example.com/app:3' | kubectl -n "$failover" apply -f - >/dev/null
echo "after-term example.com/app:3" >>"$work/expected"
echo "demomicroservice.devops.my.domain/after-term" >>"$work/expected-dms"
eventually "replica 3 to reconcile an object created after the handover" settled
kubectl -n "$failover" delete dms --all --timeout=60s >/dev/null
kill -TERM "${replicas[3]}"
wait "${replicas[3]}" || fail "replica 3 exited with $? on SIGTERM"
kubectl delete namespace "$failover" --wait=false >/dev/null
pass "SIGTERM: the leader released its Lease and replica 3 led ${took_over} s later"
trap 'if [ -n "$run" ]; then stop_manager; fi; cleanup' EXIT

echo "== the example's webhooks, called by the API server"
certs=$work/webhook-certs
mkdir -p "$certs"
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=localhost \
  -addext subjectAltName=IP:127.0.0.1,DNS:localhost \
  -keyout "$certs/tls.key" -out "$certs/tls.crt" 2>/dev/null
# The webhook configurations and CRDs on stdin (documents or a List), calling the manager on
# this machine at https://127.0.0.1:9443 and trusting the certificate above, instead of the
# webhook Service, which the API server cannot reach here (no container runs the manager).
local_webhooks() {
  "$python" -c '
import base64, sys, yaml
ca = base64.b64encode(open(sys.argv[1], "rb").read()).decode()
docs = [d for d in yaml.safe_load_all(sys.stdin) if d]
objects = [o for d in docs for o in d.get("items", [d])]
for o in objects:
    for key in ("resourceVersion", "uid", "creationTimestamp", "managedFields", "generation"):
        o["metadata"].pop(key, None)
    conversion = o.get("spec", {}).get("conversion", {}).get("webhook")
    for webhook in o.get("webhooks", []) + ([conversion] if conversion else []):
        path = webhook["clientConfig"]["service"]["path"]
        webhook["clientConfig"] = {"url": "https://127.0.0.1:9443" + path, "caBundle": ca}
print(yaml.safe_dump_all(objects))
' "$certs/tls.crt"
}
# start_manager_with_webhooks [VARIABLE=VALUE...] [BINARY [ARGS...]]: the manager (BINARY,
# default demo-microservice), run as `make run` runs it, with the environment variables given,
# serving the webhooks with that certificate.
start_manager_with_webhooks() {
  local variables=()
  while [ $# -gt 0 ] && [[ $1 == *=* ]]; do
    variables+=("$1")
    shift
  done
  if (exec 3<>/dev/tcp/127.0.0.1/9443) 2>/dev/null; then
    fail "something listens on 127.0.0.1:9443 already (a manager of an earlier run?)"
  fi
  setsid env "${variables[@]}" cargo run --quiet --bin "${1:-demo-microservice}" -- \
    --webhook-cert-path "$certs" "${@:2}" >"$work/run.log" 2>&1 &
  run=$!
  for _ in $(seq 1 240); do
    # Its own process: a manager left over from an earlier run must not answer for it.
    kill -0 "$run" 2>/dev/null || break
    (exec 3<>/dev/tcp/127.0.0.1/9443) 2>/dev/null && return
    sleep 0.5
  done
  cat "$work/run.log"
  fail "the manager did not serve its webhooks on 127.0.0.1:9443"
}
local_webhooks <config/webhook/manifests.yaml >"$work/webhooks.yaml"
kubectl apply -f "$work/webhooks.yaml"
start_manager_with_webhooks
dms untagged 'image: nginx' | refused \
  "admission webhook \"vdemomicroservice-v1.kb.io\" denied the request: spec.image 'nginx' must name a tag other than latest, or a digest"
dms latest 'image: nginx:latest' | refused "spec.image 'nginx:latest' must name a tag"
dms labelled 'image: nginx:1.27' | kubectl apply -f -
label=$(kubectl get dms labelled -o jsonpath='{.metadata.labels.app\.kubernetes\.io/name}')
[ "$label" = demomicroservice ] || fail "the defaulting webhook did not label the DemoMicroService: '$label'"
kubectl delete dms labelled --timeout=60s
stop_manager
kubectl delete -f "$work/webhooks.yaml"
pass "webhooks: an untagged image refused with the validator's message; the defaulter's label set"

make build-installer IMG=example.com/demo-microservice:v0.1.0
grep -q "image: example.com/demo-microservice:v0.1.0" dist/install.yaml
pass "make build-installer"
start_manager
sample_becomes_a_deployment
# kube-controller-manager gives the Deployment a ReplicaSet, which creates its Pod; the scheduler
# binds it to a simulated node, where KWOK reports it Running; the Deployment becomes Available,
# and so does the sample, as `kubectl wait` sees it.
replicaset=''
has_a_running_pod() {
  replicaset=$(controlled replicasets Deployment "$sample" | awk '{ print $1 }')
  [ -n "$replicaset" ] && [ "$(controlled pods ReplicaSet "$replicaset" | awk '{ print $2 }')" = Running ]
}
eventually "the sample's Deployment to get a ReplicaSet and a Running Pod" has_a_running_pod
kubectl wait --for condition=Available --timeout=60s deployment "$sample"
kubectl wait --for condition=Available --timeout=60s dms "$sample"
kubectl get replicasets,pods -o wide
kubectl get dms "$sample"
# Deleting the sample waits for its finalizer, which the manager removes after deleting the
# Deployment; the garbage collector deletes the ReplicaSet and the Pod.
kubectl delete -k config/samples --timeout=60s
gone dms "$sample" || fail "the sample outlived its deletion"
gone deployment "$sample" || fail "the sample's Deployment outlived it"
nothing_left() {
  [ -z "$(controlled replicasets Deployment "$sample")" ] && [ -z "$(controlled pods ReplicaSet "$replicaset")" ]
}
eventually "the garbage collector to delete the sample's ReplicaSet and Pod" nothing_left
pass "make run: the sample becomes an Available Deployment, with a ReplicaSet and a Running Pod, which all go with it"
# Deleted with --cascade=orphan, the sample leaves its Deployment behind: the garbage collector
# removes the owner reference, and the manager's finalizer then spares the Deployment.
sample_becomes_a_deployment
kubectl delete -k config/samples --cascade=orphan --timeout=60s
gone dms "$sample" || fail "the sample outlived its deletion with --cascade=orphan"
owners=$(kubectl get deployment "$sample" -o jsonpath='{.metadata.ownerReferences}') \
  || fail "the sample deleted with --cascade=orphan took its Deployment with it"
[ -z "$owners" ] || fail "the orphaned Deployment still has owner references: $owners"
kubectl delete deployment "$sample"
stop_manager
pass "make run: the sample deleted with --cascade=orphan leaves its Deployment, without owner"
make uninstall
gone crd demomicroservices.devops.my.domain || fail "make uninstall left the CRD in place"
pass "make uninstall"

# No container runs here (KWOK only reports the manager's Pod Running): deploy is checked by
# what it creates. A manager run on this machine, with the deployed manager's arguments and only
# its ServiceAccount's permissions, stands in for the deployed one, so that undeploy meets a
# resource with a finalizer.
image=example.com/demo-microservice:v0.1.0
system=demo-microservice-system
manager=demo-microservice-controller-manager
# The webhooks' certificate comes from cert-manager, which does not run here: its kinds, so
# that the API server stores the Certificate and the Issuer.
for kind in Certificate Issuer; do
  plural=$(tr '[:upper:]' '[:lower:]' <<<"${kind}s")
  kubectl apply -f - <<EOF
{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
 "metadata": {"name": "$plural.cert-manager.io"},
 "spec": {"group": "cert-manager.io", "scope": "Namespaced",
  "names": {"kind": "$kind", "plural": "$plural", "singular": "${plural%s}", "listKind": "${kind}List"},
  "versions": [{"name": "v1", "served": true, "storage": true,
   "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}}
EOF
done
kubectl wait --for condition=Established crd/certificates.cert-manager.io crd/issuers.cert-manager.io
make deploy IMG=$image
# Every object of dist/deploy.yaml (what deploy applied) exists; the manager's image is IMG.
kubectl get -f dist/deploy.yaml
deployed=$(kubectl -n "$system" get deployment "$manager" \
  -o jsonpath='{.spec.template.spec.containers[0].image}')
[ "$deployed" = "$image" ] || fail "make deploy: the manager's image is '$deployed', not $image"
# The namespace enforces the restricted Pod Security Standard: the manager's Pod is created
# only if it complies (else its ReplicaSet reports FailedCreate).
manager_pod_created() {
  local replicaset
  replicaset=$(kubectl -n "$system" get replicasets -o name | head -n 1)
  [ -n "$replicaset" ] && [ -n "$(kubectl -n "$system" get pods -o name)" ]
}
eventually "the manager's Pod to be created in $system (restricted Pod Security)" manager_pod_created
kubectl -n "$system" get replicasets,pods
pass "make deploy: every object created, the manager's Pod admitted by the restricted Pod Security Standard"
# The deployed webhook configurations call the webhook Service: pointed at the local manager
# (replaced: an apply would merge the url into clientConfig beside the service, which the API
# server refuses).
kubectl get mutatingwebhookconfigurations,validatingwebhookconfigurations -o yaml \
  | local_webhooks | kubectl replace -f -
# The stand-in manager's kubeconfig: the API server, as the manager's ServiceAccount.
manager_kubeconfig=$work/manager-kubeconfig
server=$(kubectl config view --minify -o jsonpath='{.clusters[0].cluster.server}')
kubectl config --kubeconfig "$manager_kubeconfig" set-cluster control-plane --server "$server" \
  --certificate-authority "$control_plane_dir/ca.crt" --embed-certs >/dev/null
kubectl config --kubeconfig "$manager_kubeconfig" set-credentials manager \
  --token "$(kubectl -n "$system" create token "$manager")" >/dev/null
kubectl config --kubeconfig "$manager_kubeconfig" set-context manager --cluster control-plane \
  --user manager --namespace "$system" >/dev/null
kubectl config --kubeconfig "$manager_kubeconfig" use-context manager >/dev/null
start_manager_with_webhooks KUBECONFIG="$manager_kubeconfig" POD_NAMESPACE="$system" \
  demo-microservice --leader-elect
leader() {
  kubectl -n "$system" get lease demo-microservice-leader-election -o jsonpath='{.spec.holderIdentity}' 2>/dev/null \
    | grep -q .
}
eventually "the manager to take its leader-election Lease in $system" leader
sample_becomes_a_deployment
created_event() {
  kubectl get events --field-selector "involvedObject.name=$sample" \
    -o jsonpath='{range .items[*]}{.reason}: {.message}{"\n"}{end}' | grep -qxF "Created: Created Deployment $sample"
}
eventually "the manager to record the Event Created for the sample" created_event
pass "the manager with its ServiceAccount's permissions: leader election, the sample's Deployment, its Event"

echo "== authenticated metrics, read with ServiceAccount tokens"
# Prometheus' ServiceAccount, bound to the project's metrics-reader ClusterRole (as make deploy
# created it), and another one, bound to nothing.
kubectl create namespace monitoring
kubectl -n monitoring create serviceaccount prometheus
kubectl -n monitoring create serviceaccount other
kubectl create clusterrolebinding prometheus-metrics-reader \
  --clusterrole demo-microservice-metrics-reader --serviceaccount monitoring:prometheus
may_read_metrics() { [ "$(kubectl auth can-i get /metrics --as "$1" 2>/dev/null)" = yes ]; }
eventually "the binding to let Prometheus get /metrics" may_read_metrics system:serviceaccount:monitoring:prometheus
reader_token=$(kubectl -n monitoring create token prometheus)
other_token=$(kubectl -n monitoring create token other)
# The manager serves its metrics as in the cluster: HTTPS (a self-signed certificate) on
# 127.0.0.1:8443, to a token the API server authenticates (TokenReview) whose user may get
# /metrics (SubjectAccessReview); it asks both as its ServiceAccount.
scrape() { # TOKEN ('' for none) -> the HTTP status; the body goes to $work/metrics.txt
  python3 - "$1" "$work/metrics.txt" <<'PY'
import ssl, sys, urllib.error, urllib.request
token, out = sys.argv[1], sys.argv[2]
request = urllib.request.Request("https://127.0.0.1:8443/metrics")
if token:
    request.add_header("Authorization", f"Bearer {token}")
try:
    with urllib.request.urlopen(request, context=ssl._create_unverified_context(), timeout=10) as r:
        open(out, "wb").write(r.read())
        print(r.status)
except urllib.error.HTTPError as error:
    print(error.code)
PY
}
status=$(scrape "$reader_token")
[ "$status" = 200 ] || fail "secure metrics: the reader's token got $status; the manager's log: $(tail -20 "$work/run.log")"
grep -q '^controller_runtime_reconcile_total{controller="demomicroservice",result="requeue_after"} [1-9]' "$work/metrics.txt" \
  || fail "secure metrics: no successful reconcile counted in $(cat "$work/metrics.txt")"
grep -q '^rest_client_requests_total{' "$work/metrics.txt" || fail "secure metrics: no rest_client_requests_total"
status=$(scrape "$other_token")
[ "$status" = 403 ] || fail "secure metrics: a ServiceAccount not bound to metrics-reader got $status, not 403"
status=$(scrape "${reader_token%?????}xxxxx") # its signature broken
[ "$status" = 401 ] || fail "secure metrics: a token with a bad signature got $status, not 401"
status=$(scrape not-a-token)
[ "$status" = 401 ] || fail "secure metrics: an invalid token got $status, not 401"
status=$(scrape '')
[ "$status" = 401 ] || fail "secure metrics: a request without a token got $status, not 401"
kubectl delete clusterrolebinding prometheus-metrics-reader
kubectl delete namespace monitoring --wait=false
pass "secure metrics: a ServiceAccount bound to metrics-reader reads them, another gets 403, a bad token or none 401"

if grep -i forbidden "$work/run.log"; then
  fail "the manager was refused something its ServiceAccount needs (above)"
fi
make undeploy
stop_manager
left=$(kubectl get -f dist/deploy.yaml --ignore-not-found -o name)
[ -z "$left" ] || fail "make undeploy left: $left"
gone deployment "$sample" || fail "make undeploy left the sample's Deployment"
pass "make undeploy"
echo "== conversion between two versions of a kind, through the webhook"
cd "$work/guestbook-operator"
"$rbuilder" create api --group devops --version v2 --kind Guestbook >/dev/null
"$rbuilder" create webhook --group devops --version v1 --kind Guestbook \
  --conversion --spoke v2 >/dev/null
kubectl kustomize config/crd | local_webhooks | kubectl apply --server-side -f -
kubectl wait --for condition=Established crd/guestbooks.devops.my.domain
start_manager_with_webhooks guestbook-operator
printf 'apiVersion: devops.my.domain/v1\nkind: Guestbook\nmetadata:\n  name: converted\nspec:\n  foo: bar\n' \
  | kubectl apply -f -
got=$(kubectl get guestbooks.v2.devops.my.domain converted -o jsonpath='{.apiVersion} {.spec.foo}')
[ "$got" = "devops.my.domain/v2 bar" ] || fail "conversion: a v1 Guestbook read as v2 gave '$got'"
kubectl delete guestbook converted --timeout=60s
stop_manager
pass "conversion: a Guestbook created as v1 is read as v2 through the webhook, its fields kept"

echo "== a built-in type's webhooks: Pods, except in kube-system and the manager's namespace"
"$rbuilder" create webhook --group core --version v1 --kind Pod \
  --defaulting --programmatic-validation >/dev/null
# The user's logic: the defaulter labels every Pod it sees; the validator asks for deletions
# and refuses deleting the Pod named kept.
"$python" - src/webhook/v1/pod.rs <<'PY'
import sys
path = sys.argv[1]
code = open(path).read()
scaffolded = [
    ("fn default(_obj: &mut Pod) -> Result<(), Denied> {\n        Ok(())",
     "fn default(obj: &mut Pod) -> Result<(), Denied> {\n"
     "        let labels = obj.metadata.labels.get_or_insert_with(Default::default);\n"
     "        labels.insert(\"webhook\".into(), \"defaulted\".into());\n"
     "        Ok(())"),
    ("impl Validator for PodWebhook {\n    type Resource = Pod;\n",
     "impl Validator for PodWebhook {\n    type Resource = Pod;\n"
     "    const VALIDATE_DELETE: bool = true;\n\n"
     "    fn validate_delete(obj: &Pod) -> Result<Warnings, Denied> {\n"
     "        match obj.metadata.name.as_deref() {\n"
     "            Some(\"kept\") => Err(Denied::new(\"the pod kept is kept\")),\n"
     "            _ => Ok(Warnings::new()),\n"
     "        }\n"
     "    }\n"),
]
for old, new in scaffolded:
    assert old in code, f"{path} no longer has: {old}"
    code = code.replace(old, new)
open(path, "w").write(code)
PY
make manifests >/dev/null
grep -q -- '- DELETE' config/webhook/manifests.yaml || fail "make manifests did not add DELETE for VALIDATE_DELETE"
system=guestbook-operator-system
kubectl create namespace "$system"
for namespace in default "$system" kube-system; do
  eventually "the ServiceAccount default to be created in $namespace" has_default_service_account "$namespace"
done
# The webhook configurations as make deploy renders them: the namespaceSelector names $system.
kubectl kustomize config/default | "$python" -c '
import sys, yaml
kinds = ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration")
print(yaml.safe_dump_all([d for d in yaml.safe_load_all(sys.stdin) if d and d["kind"] in kinds]))
' | local_webhooks >"$work/pod-webhooks.yaml"
grep -q -- "- $system" "$work/pod-webhooks.yaml" || fail "the namespaceSelector does not name $system"
kubectl apply -f "$work/pod-webhooks.yaml"
start_manager_with_webhooks guestbook-operator
pod() { # NAME NAMESPACE
  printf 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n  namespace: %s\nspec:\n  containers:\n  - name: app\n    image: nginx:1.27\n' "$1" "$2"
}
label() { kubectl -n "$2" get pod "$1" -o jsonpath='{.metadata.labels.webhook}'; }
pod kept default | kubectl apply -f -
[ "$(label kept default)" = defaulted ] || fail "the Pod defaulter did not label a Pod in default"
for namespace in "$system" kube-system; do
  pod spared "$namespace" | kubectl apply -f -
  [ -z "$(label spared "$namespace")" ] || fail "the Pod defaulter saw a Pod in $namespace"
done
out=$(kubectl -n default delete pod kept --wait=false 2>&1) && fail "the deletion of Pod kept was not refused: $out"
grep -qF 'admission webhook "vpod-v1.kb.io" denied the request: the pod kept is kept' <<<"$out" \
  || fail "the refused deletion said: $out"
stop_manager
# With the manager down, the webhooks fail closed, except where the manager must start.
out=$(pod other default | kubectl apply -f - 2>&1) && fail "a Pod was created with its webhook down: $out"
grep -qF 'failed calling webhook "mpod-v1.kb.io"' <<<"$out" || fail "with the webhook down: $out"
pod manager "$system" | kubectl apply -f -
kubectl delete -f "$work/pod-webhooks.yaml"
kubectl -n default delete pod kept --wait=false
pass "Pod webhooks: a Pod labelled in default, none seen in kube-system or $system, a deletion refused; with the manager down, only $system takes Pods"
echo "== conversion between versions with different fields, by field names"
# The example's kind gets a plain v2 (no image: a second version of an --image kind is plain),
# converted to and from v1 through the annotation that keeps what v2 has no field for.
cd "$work/demo-microservice"
"$rbuilder" create api --group devops --version v2 --kind DemoMicroService >/dev/null
"$rbuilder" create webhook --group devops --version v1 --kind DemoMicroService \
  --conversion --spoke v2 >/dev/null
kubectl kustomize config/crd | local_webhooks | kubectl apply --server-side -f -
kubectl wait --for condition=Established crd/demomicroservices.devops.my.domain
start_manager_with_webhooks
v1=demomicroservices.v1.devops.my.domain v2=demomicroservices.v2.devops.my.domain
dms kept 'image: nginx:1.27' | kubectl apply -f -
got=$(kubectl get "$v2" kept -o jsonpath='{.apiVersion} {.spec.image}')
[ "$got" = "devops.my.domain/v2 " ] || fail "conversion by field names: v1 read as v2 gave '$got'"
kept=$(kubectl get "$v2" kept -o jsonpath='{.metadata.annotations.devops\.my\.domain/v1-conversion-data}')
grep -qF '"image":"nginx:1.27"' <<<"$kept" || fail "v2 does not carry v1's image in its annotation: '$kept'"
# A write through v2, which has no image field: v1's image must survive it.
kubectl label "$v2" kept written-as=v2
got=$(kubectl get "$v1" kept -o jsonpath='{.spec.image} {.metadata.labels.written-as}')
[ "$got" = "nginx:1.27 v2" ] || fail "conversion by field names: after a write as v2, v1 has '$got'"
printf 'apiVersion: devops.my.domain/v2\nkind: DemoMicroService\nmetadata:\n  name: imageless\nspec:\n  foo: bar\n' \
  | refused "missing field \`image\`"
kubectl delete "$v1" kept --timeout=60s
stop_manager
pass "conversion by field names: a v1 DemoMicroService written through v2, which has no image, keeps its image; one made in v2 is refused for its missing image"
echo "e2e: $passed passed, 0 failed"
