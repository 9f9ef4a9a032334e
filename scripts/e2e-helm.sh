#!/usr/bin/env bash
# End to end for the Helm chart of `rbuilder edit --plugins helm/v2-alpha`: the golden tree
# testdata/helm-chart (the tutorial's DemoMicroService operator with its chart) installed with
# the real Helm (scripts/helm) on a real control plane (scripts/control-plane: etcd,
# kube-apiserver, kube-controller-manager; no kubelet, so Pods stay Pending):
#   1. `make helm` makes the chart's templates from config/default;
#   2. `make helm-deploy` installs the release: every object of its manifest exists, the
#      namespace enforces the restricted Pod Security Standard and the manager's Pod is
#      admitted there, with the image IMG;
#   3. `make helm-deploy` again upgrades the release to another image;
#   4. a manager run on this machine with only the chart's ServiceAccount token (as the
#      deployed one would run) takes its Lease and makes the sample DemoMicroService a
#      Deployment; the chart's webhook configurations, pointed at it, refuse an untagged image;
#      nothing it does is forbidden;
#   5. `make helm-uninstall` removes every object of the release but the CRDs (crd.keep); a
#      release installed with crd.keep=false takes them along when uninstalled.
# Needs what scripts/e2e.sh needs (cargo, make, openssl, python3 with target/venv's PyYAML), and
# go the first time (scripts/envtest-assets and scripts/helm build their binaries).
set -euo pipefail
cd "$(dirname "$0")/.."

repo=$PWD
# rbuilder's own target folder: the dependencies compiled by tests/generated.rs and
# scripts/e2e.sh are reused.
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$repo/target}
export CARGO_INCREMENTAL=0 CARGO_PROFILE_DEV_DEBUG=0
assets=$(scripts/envtest-assets)
export PATH=$assets:$PATH
helm=$(scripts/helm)
python=${E2E_PYTHON:-$repo/target/venv/bin/python}
work=$(mktemp -d)
control_plane_dir=$work/control-plane
KUBEBUILDER_ASSETS=$assets scripts/control-plane "$control_plane_dir" &
control_plane=$!
run=''
stop_manager() {
  kill -- -"$run" 2>/dev/null || true
  wait "$run" 2>/dev/null || true
  run=''
}
cleanup() {
  if [ -n "$run" ]; then stop_manager; fi
  kill "$control_plane" 2>/dev/null || true
  wait "$control_plane" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
passed=0
pass() { passed=$((passed + 1)); echo "e2e-helm: ok [${SECONDS}s]: $*"; }
fail() { echo "e2e-helm: FAILED: $*" >&2; echo "e2e-helm: $passed passed, 1 failed"; exit 1; }
for _ in $(seq 1 1200); do
  [ -e "$control_plane_dir/ready" ] && break
  kill -0 "$control_plane" 2>/dev/null || fail "the control plane did not start (see above)"
  sleep 0.1
done
[ -e "$control_plane_dir/ready" ] || fail "the control plane was not ready within 120 s"
export KUBECONFIG=$control_plane_dir/kubeconfig
"$helm" version

eventually() { # WHAT COMMAND...: COMMAND until it succeeds, for 60 s at most
  local what=$1
  shift
  for _ in $(seq 1 240); do
    "$@" && return 0
    sleep 0.25
  done
  fail "$what (still not so after 60 s)"
}
gone() { ! kubectl get "$@" >/dev/null 2>&1; }
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

project="helm-chart"
system=$project-system
release=$project
manager=$project-controller-manager
cp -r testdata/helm-chart "$work/$project"
# The golden tree holds no copy of the runtime (rbuilder writes the workspace's, byte for byte).
mkdir "$work/$project/runtime"
cp -rp runtime/Cargo.toml runtime/src runtime/core runtime/manifests runtime/testing "$work/$project/runtime/"
cd "$work/$project"

echo "== make helm: the chart's templates from config/default"
make helm
[ -f dist/chart/templates/manager/manager.yaml ] || fail "make helm made no manager template"
pass "make helm"

echo "== make helm-deploy: the release installed"
# The certificates come from cert-manager, which does not run here: its kinds, so that the API
# server stores the chart's Certificates and Issuer.
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
# No Pod becomes ready without a kubelet: Helm waits for nothing but hooks (there are none).
deploy() { make helm-deploy HELM="$helm" IMG="$1" HELM_EXTRA_ARGS="--wait=hookOnly ${2:-}"; }
image=example.com/$project:v0.1.0
deploy "$image"
"$helm" -n "$system" get manifest "$release" >"$work/manifest.yaml"
kubectl get -f "$work/manifest.yaml" >/dev/null || fail "an object of the release's manifest is missing"
[ "$(kubectl get namespace "$system" -o jsonpath='{.metadata.labels.pod-security\.kubernetes\.io/enforce}')" = restricted ] \
  || fail "helm-deploy did not make $system enforce the restricted Pod Security Standard"
deployed=$(kubectl -n "$system" get deployment "$manager" -o jsonpath='{.spec.template.spec.containers[0].image}')
[ "$deployed" = "$image" ] || fail "the manager's image is '$deployed', not $image"
manager_pod_created() { [ -n "$(kubectl -n "$system" get pods -l control-plane=controller-manager -o name)" ]; }
eventually "the manager's Pod to be created in $system (restricted Pod Security)" manager_pod_created
kubectl get crd demomicroservices.devops.my.domain guestbooks.devops.my.domain >/dev/null
kubectl -n "$system" get deployments,replicasets,pods,services,serviceaccounts,roles,rolebindings
pass "make helm-deploy: every object of the release, the manager's Pod admitted by the restricted Pod Security Standard"

echo "== make helm-deploy again: an upgrade"
deploy "example.com/$project:v0.2.0"
deployed=$(kubectl -n "$system" get deployment "$manager" -o jsonpath='{.spec.template.spec.containers[0].image}')
[ "$deployed" = "example.com/$project:v0.2.0" ] || fail "the upgrade left the image '$deployed'"
[ "$("$helm" -n "$system" history "$release" -o json | "$python" -c 'import json, sys; print(len(json.load(sys.stdin)))')" = 2 ] \
  || fail "the release has not two revisions"
pass "make helm-deploy again: the release upgraded to another image"

echo "== the manager with the chart's ServiceAccount token"
certs=$work/webhook-certs
mkdir -p "$certs"
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=localhost \
  -addext subjectAltName=IP:127.0.0.1,DNS:localhost \
  -keyout "$certs/tls.key" -out "$certs/tls.crt" 2>/dev/null
webhook_port=$(free_port)
# The chart's webhook configurations call its Service, which no Pod backs here: pointed at the
# manager run on this machine instead, trusting its certificate (replaced, not applied: an
# apply would merge url beside service, which the API server refuses).
kubectl get mutatingwebhookconfigurations,validatingwebhookconfigurations -l "app.kubernetes.io/instance=$release" -o yaml \
  | "$python" -c '
import base64, sys, yaml
ca = base64.b64encode(open(sys.argv[1], "rb").read()).decode()
objects = [o for d in yaml.safe_load_all(sys.stdin) if d for o in d.get("items", [d])]
assert objects, "the release has no webhook configurations"
for o in objects:
    for webhook in o["webhooks"]:
        path = webhook["clientConfig"]["service"]["path"]
        webhook["clientConfig"] = {"url": "https://127.0.0.1:" + sys.argv[2] + path, "caBundle": ca}
print(yaml.safe_dump_all(objects))
' "$certs/tls.crt" "$webhook_port" | kubectl replace -f -
manager_kubeconfig=$work/manager-kubeconfig
server=$(kubectl config view --minify -o jsonpath='{.clusters[0].cluster.server}')
kubectl config --kubeconfig "$manager_kubeconfig" set-cluster control-plane --server "$server" \
  --certificate-authority "$control_plane_dir/ca.crt" --embed-certs >/dev/null
kubectl config --kubeconfig "$manager_kubeconfig" set-credentials manager \
  --token "$(kubectl -n "$system" create token "$manager")" >/dev/null
kubectl config --kubeconfig "$manager_kubeconfig" set-context manager --cluster control-plane \
  --user manager --namespace "$system" >/dev/null
kubectl config --kubeconfig "$manager_kubeconfig" use-context manager >/dev/null
cargo build --quiet --bin "$project"
setsid env KUBECONFIG="$manager_kubeconfig" POD_NAMESPACE="$system" \
  "$CARGO_TARGET_DIR/debug/$project" --leader-elect \
  --webhook-bind-address "127.0.0.1:$webhook_port" --webhook-cert-path "$certs" \
  --metrics-bind-address "127.0.0.1:$(free_port)" --health-probe-bind-address "127.0.0.1:$(free_port)" \
  >"$work/run.log" 2>&1 &
run=$!
leader() {
  kubectl -n "$system" get lease "$project-leader-election" -o jsonpath='{.spec.holderIdentity}' 2>/dev/null | grep -q .
}
eventually "the manager to take its leader-election Lease in $system" leader
sample=demomicroservice-sample
kubectl apply -f config/samples/devops_v1_demomicroservice.yaml
has_deployment() { kubectl get deployment "$sample" >/dev/null 2>&1; }
eventually "the sample to become a Deployment (the manager's log: $work/run.log)" has_deployment
kubectl get dms,deployments
refused=$(printf 'apiVersion: devops.my.domain/v1\nkind: DemoMicroService\nmetadata:\n  name: untagged\nspec:\n  image: nginx\n' \
  | kubectl apply -f - 2>&1) && fail "the chart's validating webhook let an untagged image in"
grep -qF 'admission webhook "vdemomicroservice-v1.kb.io" denied the request' <<<"$refused" \
  || fail "an untagged image was refused otherwise: $refused"
kubectl delete dms "$sample" --timeout=60s
gone deployment "$sample" || fail "the sample's Deployment outlived it"
stop_manager
if grep -i forbidden "$work/run.log"; then
  fail "the manager was refused something the chart's RBAC should grant (above)"
fi
pass "the manager with the chart's ServiceAccount token: its Lease, the sample's Deployment, the chart's webhooks"

echo "== make helm-uninstall"
"$helm" -n "$system" get manifest "$release" >"$work/manifest.yaml"
make helm-uninstall HELM="$helm"
left=$(kubectl get -f "$work/manifest.yaml" --ignore-not-found -o name | grep -v customresourcedefinition || true)
[ -z "$left" ] || fail "helm uninstall left: $left"
kubectl get crd demomicroservices.devops.my.domain guestbooks.devops.my.domain >/dev/null \
  || fail "helm uninstall took the CRDs, which crd.keep keeps"
deploy "$image" "--set crd.keep=false"
make helm-uninstall HELM="$helm"
crds_gone() { gone crd demomicroservices.devops.my.domain && gone crd guestbooks.devops.my.domain; }
eventually "the CRDs to be deleted with a release of crd.keep=false" crds_gone
left=$(kubectl get -f "$work/manifest.yaml" --ignore-not-found -o name)
[ -z "$left" ] || fail "helm uninstall left: $left"
pass "make helm-uninstall: nothing of the release left but the CRDs it keeps; with crd.keep=false, those too"
echo "e2e-helm: $passed passed, 0 failed"
