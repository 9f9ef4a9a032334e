#!/usr/bin/env bash
# End to end, without a real cluster: runs generated operators against emulator/, this
# project's Kubernetes API emulator (see emulator/README.md for what it emulates and what not),
# started with emulator/start.sh (HTTPS, a token, OpenAPI v3: kubectl runs with its default
# validation):
#   1. `make test-e2e` of examples/demo-microservice (each test in a namespace of its own) and of
#      a plain `create api` project (in an existing namespace, E2E_NAMESPACE);
#   2. the Makefile flow a user follows: install, run (the sample becomes a Deployment, found
#      by its short name too), build-installer, uninstall, deploy, undeploy;
#   3. what the API server refuses or fills in, through the example's CRD: a negative
#      spec.replicas and a 70-character name are refused with the API server's messages, an
#      unknown field is refused by kubectl's strict field validation, an omitted spec.port
#      comes back with the CRD's default;
#   4. the TokenReview and SubjectAccessReview a manager's authenticated metrics endpoint
#      makes, answered from scripts/e2e-auth.yaml (given to the emulator at start);
#   5. the example's webhooks, called by the API server: an image without a tag is refused with
#      the validator's message, a created DemoMicroService gets the defaulter's label; and a
#      conversion webhook: the plain project's Guestbook, created as v1, read as v2. The
#      emulator runs no Services, so this harness points the webhook configurations at the
#      manager run on this machine (clientConfig.url, with a certificate made here); the
#      operator's code and manifests know nothing of it;
#   6. a built-in type's webhooks (a Pod defaulter and a validator of deletions, as a user
#      writes them): Pods are seen everywhere except in kube-system and the manager's
#      namespace, so with the manager down Pods can still start there;
#   7. conversion between versions with different fields (the example's kind and a plain v2):
#      a write through v2 keeps v1's image.
# Needs cargo, make, python3 with target/venv (`make tools`) and kubectl. Users run
# `make test-e2e` in a generated project against a real cluster (kind, k3d, ...) instead.
set -euo pipefail
cd "$(dirname "$0")/.."

repo=$PWD
export CARGO_TARGET_DIR=$repo/target/generated
# As tests/generated.rs builds the same projects, so that the dependencies compiled there are
# reused here: one-shot builds, so no incremental data and no debug info (gigabytes per
# project, and slower links), which change nothing a test looks at.
export CARGO_INCREMENTAL=0 CARGO_PROFILE_DEV_DEBUG=0
work=$(mktemp -d)
kubeconfig=$work/kubeconfig
pid=$(emulator/start.sh "$kubeconfig" scripts/e2e-auth.yaml)
cleanup() { kill "$pid" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
export KUBECONFIG=$kubeconfig
passed=0
pass() { passed=$((passed + 1)); echo "e2e: ok: $*"; }
fail() { echo "e2e: FAILED: $*" >&2; echo "e2e: $passed passed, 1 failed"; exit 1; }

echo "== e2e: TokenReview and SubjectAccessReview, as an authenticated /metrics makes them"
reader=system:serviceaccount:monitoring:prometheus
review() { # TOKEN -> authenticated username, or false
  kubectl create -o jsonpath='{.status.authenticated} {.status.user.username}' -f - <<EOF
{"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": "$1"}}
EOF
}
access() { # USER PATH -> allowed (true/false)
  kubectl create -o jsonpath='{.status.allowed}' -f - <<EOF
{"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
 "spec": {"user": "$1", "nonResourceAttributes": {"path": "$2", "verb": "get"}}}
EOF
}
[ "$(review e2e-metrics-reader-token)" = "true $reader" ] || fail "TokenReview of the table's token"
[ "$(review unknown)" = "false " ] || fail "TokenReview of an unknown token"
[ "$(access "$reader" /metrics)" = true ] || fail "SubjectAccessReview: $reader may not get /metrics"
[ "$(access someone-else /metrics)" = false ] || fail "SubjectAccessReview: anyone may get /metrics"
pass "TokenReview and SubjectAccessReview"

echo "== e2e: examples/demo-microservice"
cp -r examples/demo-microservice "$work/demo-microservice"
(cd "$work/demo-microservice" && make test-e2e)
pass "make test-e2e of examples/demo-microservice"

echo "== e2e: a plain create api project"
cargo build --quiet --target-dir "$repo/target" # rbuilder itself, as cargo test builds it
mkdir "$work/guestbook-operator"
(
  cd "$work/guestbook-operator"
  "$repo/target/debug/rbuilder" init --domain my.domain >/dev/null
  "$repo/target/debug/rbuilder" create api --group devops --kind Guestbook >/dev/null
  cp "$repo/examples/demo-microservice/Cargo.lock" .
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
# Applies the sample and waits for the running manager to make it a Deployment.
sample_becomes_a_deployment() {
  kubectl apply -k config/samples
  for _ in $(seq 1 240); do
    kubectl get deployment demomicroservice-sample >/dev/null 2>&1 && break
    sleep 0.5
  done
  kubectl get deployment demomicroservice-sample -o jsonpath='{.spec.template.spec.containers[0].image}{"\n"}' \
    || { echo "the manager did not create the Deployment; its log:"; cat "$work/run.log"; fail "the sample became no Deployment"; }
  kubectl get dms
}
gone() { ! kubectl get "$@" >/dev/null 2>&1; }

make install
kubectl get crd demomicroservices.devops.my.domain
pass "make install"

echo "== what the API server refuses or fills in (the example's CRD)"
# Runs kubectl apply on stdin, which must fail with a message containing $1.
refused() {
  local expected=$1 out
  if out=$(kubectl apply -f - 2>&1); then
    fail "the API server accepted what it refuses ($expected): $out"
  fi
  grep -qF -- "$expected" <<<"$out" || fail "expected '$expected', got: $out"
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
  "The DemoMicroService \"$long_name\" is invalid: <nil>: Invalid value: \"object\": metadata.name must be at most 63 characters (it labels the Deployment)"
dms unknown image:\ example.com/app:1 'colour: blue' | refused \
  'strict decoding error: unknown field "spec.colour"'
dms no-image 'replicas: 1' | refused \
  'The DemoMicroService "no-image" is invalid: spec.image: Required value'
dms defaulted image:\ example.com/app:1 | kubectl apply -f -
port=$(kubectl get dms defaulted -o jsonpath='{.spec.port}')
[ "$port" = 9898 ] || fail "spec.port was not defaulted to 9898 (the CRD's default): '$port'"
kubectl delete dms defaulted
pass "invalid DemoMicroServices refused with the API server's messages; spec.port defaulted"

echo "== the example's webhooks, called by the API server"
python=${EMULATOR_PYTHON:-$repo/target/venv/bin/python}
certs=$work/webhook-certs
mkdir -p "$certs"
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=localhost \
  -addext subjectAltName=IP:127.0.0.1,DNS:localhost \
  -keyout "$certs/tls.key" -out "$certs/tls.crt" 2>/dev/null
# The webhook configurations and CRDs on stdin (documents or a List), calling the manager on
# this machine at https://127.0.0.1:9443 and trusting the certificate above, instead of the
# webhook Service, which the emulator cannot reach.
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
# The manager (binary $1, default demo-microservice), run as `make run` runs it, serving the
# webhooks with that certificate.
start_manager_with_webhooks() {
  setsid cargo run --quiet --bin "${1:-demo-microservice}" -- --webhook-cert-path "$certs" \
    >"$work/run.log" 2>&1 &
  run=$!
  for _ in $(seq 1 240); do
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
# The manager of `make run` serves its metrics as in the cluster: HTTPS (a self-signed
# certificate) on 127.0.0.1:8443, to a token the API server authenticates (TokenReview) whose
# user may get /metrics (SubjectAccessReview); scripts/e2e-auth.yaml holds one such token.
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
[ "$(scrape e2e-metrics-reader-token)" = 200 ] || fail "secure metrics: the reader's token was refused"
grep -q '^controller_runtime_reconcile_total{controller="demomicroservice",result="requeue_after"} [1-9]' "$work/metrics.txt" \
  || fail "secure metrics: no successful reconcile counted in $(cat "$work/metrics.txt")"
grep -q '^rest_client_requests_total{' "$work/metrics.txt" || fail "secure metrics: no rest_client_requests_total"
[ "$(scrape e2e-other-token)" = 403 ] || fail "secure metrics: a user not granted /metrics was not refused with 403"
[ "$(scrape unknown-token)" = 401 ] || fail "secure metrics: an unknown token was not refused with 401"
[ "$(scrape '')" = 401 ] || fail "secure metrics: a request without a token was not refused with 401"
pass "secure metrics: the reader's token reads them, another user's gets 403, an unknown one or none 401"
# Deleting the sample waits for its finalizer, which the manager removes after deleting the
# Deployment.
kubectl delete -k config/samples --timeout=60s
gone dms demomicroservice-sample || fail "the sample outlived its deletion"
gone deployment demomicroservice-sample || fail "the sample's Deployment outlived it"
stop_manager
pass "make run: the sample becomes a Deployment, which goes with it"
make uninstall
gone crd demomicroservices.devops.my.domain || fail "make uninstall left the CRD in place"
pass "make uninstall"

# The emulator runs no Pods: deploy is checked by what it creates. A manager from `make run`
# stands in for the deployed one, so that undeploy meets a resource with a finalizer.
image=example.com/demo-microservice:v0.1.0
system=demo-microservice-system
# The webhooks' certificate comes from cert-manager: its kinds, enough for the emulator to
# store them (it runs no cert-manager).
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
make deploy IMG=$image
# Every object of dist/deploy.yaml (what deploy applied) exists; the manager's image is IMG.
kubectl get -f dist/deploy.yaml
deployed=$(kubectl -n "$system" get deployment demo-microservice-controller-manager \
  -o jsonpath='{.spec.template.spec.containers[0].image}')
[ "$deployed" = "$image" ] || fail "make deploy: the manager's image is '$deployed', not $image"
pass "make deploy"
# The deployed webhook configurations call the webhook Service: pointed at the local manager.
kubectl get mutatingwebhookconfigurations,validatingwebhookconfigurations -o yaml \
  | local_webhooks | kubectl apply -f -
start_manager_with_webhooks
sample_becomes_a_deployment
make undeploy
stop_manager
left=$(kubectl get -f dist/deploy.yaml --ignore-not-found -o name)
[ -z "$left" ] || fail "make undeploy left: $left"
gone deployment demomicroservice-sample || fail "make undeploy left the sample's Deployment"
pass "make undeploy"
echo "== conversion between two versions of a kind, through the webhook"
cd "$work/guestbook-operator"
"$repo/target/debug/rbuilder" create api --group devops --version v2 --kind Guestbook >/dev/null
"$repo/target/debug/rbuilder" create webhook --group devops --version v1 --kind Guestbook \
  --conversion --spoke v2 >/dev/null
kubectl kustomize config/crd | local_webhooks | kubectl apply --server-side -f -
start_manager_with_webhooks guestbook-operator
printf 'apiVersion: devops.my.domain/v1\nkind: Guestbook\nmetadata:\n  name: converted\nspec:\n  foo: bar\n' \
  | kubectl apply -f -
got=$(kubectl get guestbooks.v2.devops.my.domain converted -o jsonpath='{.apiVersion} {.spec.foo}')
[ "$got" = "devops.my.domain/v2 bar" ] || fail "conversion: a v1 Guestbook read as v2 gave '$got'"
kubectl delete guestbook converted --timeout=60s
stop_manager
pass "conversion: a Guestbook created as v1 is read as v2 through the webhook, its fields kept"

echo "== a built-in type's webhooks: Pods, except in kube-system and the manager's namespace"
"$repo/target/debug/rbuilder" create webhook --group core --version v1 --kind Pod \
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
for namespace in "$system" kube-system; do
  printf '{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "%s"}}' "$namespace" \
    | kubectl apply -f -
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
"$repo/target/debug/rbuilder" create api --group devops --version v2 --kind DemoMicroService >/dev/null
"$repo/target/debug/rbuilder" create webhook --group devops --version v1 --kind DemoMicroService \
  --conversion --spoke v2 >/dev/null
kubectl kustomize config/crd | local_webhooks | kubectl apply --server-side -f -
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
