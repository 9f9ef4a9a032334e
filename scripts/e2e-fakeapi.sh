#!/usr/bin/env bash
# End to end, without a real cluster: runs generated operators against ../shared/fakeapi, the
# API emulator of this project's CI (see its README for what it does not emulate), started with
# scripts/fakeapi/start.sh (rbuilder's layer over it: Namespace objects, constant request cost):
#   1. `make test-e2e` of examples/demo-microservice (each test in a namespace of its own) and of
#      a plain `create api` project (in an existing namespace, E2E_NAMESPACE);
#   2. the Makefile flow a user follows: install, run (the sample becomes a Deployment, found
#      by its short name too), build-installer, uninstall, deploy, undeploy.
# Where the emulator is absent (a user's machine) it says so and skips: there, run
# `make test-e2e` in a generated project against your own cluster (kind, k3d, ...).
set -euo pipefail
cd "$(dirname "$0")/.."
fakeapi=${FAKEAPI:-../shared/fakeapi}
if [ ! -x "$fakeapi/start.sh" ]; then
  echo "e2e: skipped: no API emulator at $fakeapi (it comes with this project's CI machines);"
  echo "e2e: run 'make test-e2e' in a generated project against a real cluster instead"
  exit 0
fi

repo=$PWD
export CARGO_TARGET_DIR=$repo/target/generated
work=$(mktemp -d)
kubeconfig=$work/kubeconfig
pid=$(FAKEAPI=$fakeapi scripts/fakeapi/start.sh "$kubeconfig")
cleanup() { kill "$pid" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
export KUBECONFIG=$kubeconfig
# The emulator serves no OpenAPI, which kubectl's client-side validation needs.
export KUBECTL_APPLY_FLAGS=--validate=false
kubectl() { command kubectl --validate=false "$@"; }

echo "== e2e: examples/demo-microservice"
cp -r examples/demo-microservice "$work/demo-microservice"
(cd "$work/demo-microservice" && make test-e2e)

echo "== e2e: a plain create api project"
cargo build --quiet
mkdir "$work/guestbook-operator"
(
  cd "$work/guestbook-operator"
  "$repo/target/debug/rbuilder" init --domain my.domain >/dev/null
  "$repo/target/debug/rbuilder" create api --group devops --kind Guestbook >/dev/null
  cp "$repo/examples/demo-microservice/Cargo.lock" .
  # For clusters where the tests may not create namespaces.
  E2E_NAMESPACE=default make test-e2e
)

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
  command kubectl apply --validate=false -k config/samples
  for _ in $(seq 1 240); do
    command kubectl get deployment demomicroservice-sample >/dev/null 2>&1 && break
    sleep 0.5
  done
  command kubectl get deployment demomicroservice-sample -o jsonpath='{.spec.template.spec.containers[0].image}{"\n"}' \
    || { echo "the manager did not create the Deployment; its log:"; cat "$work/run.log"; exit 1; }
  command kubectl get dms
}
gone() { ! command kubectl get "$@" >/dev/null 2>&1; }

make install
command kubectl get crd demomicroservices.devops.my.domain
make build-installer IMG=example.com/demo-microservice:v0.1.0
grep -q "image: example.com/demo-microservice:v0.1.0" dist/install.yaml
start_manager
sample_becomes_a_deployment
# Deleting the sample waits for its finalizer, which the manager removes after deleting the
# Deployment.
command kubectl delete -k config/samples --timeout=60s
gone dms demomicroservice-sample || { echo "the sample outlived its deletion"; exit 1; }
gone deployment demomicroservice-sample || { echo "the sample's Deployment outlived it"; exit 1; }
stop_manager
make uninstall
gone crd demomicroservices.devops.my.domain || { echo "make uninstall left the CRD in place"; exit 1; }

# The emulator runs no Pods: deploy is checked by what it creates. A manager from `make run`
# stands in for the deployed one, so that undeploy meets a resource with a finalizer.
image=example.com/demo-microservice:v0.1.0
system=demo-microservice-system
make deploy IMG=$image
# Every object of dist/deploy.yaml (what deploy applied) exists; the manager's image is IMG.
command kubectl get -f dist/deploy.yaml
deployed=$(command kubectl -n "$system" get deployment demo-microservice-controller-manager \
  -o jsonpath='{.spec.template.spec.containers[0].image}')
[ "$deployed" = "$image" ] || { echo "make deploy: the manager's image is '$deployed', not $image"; exit 1; }
start_manager
sample_becomes_a_deployment
make undeploy
stop_manager
left=$(command kubectl get -f dist/deploy.yaml --ignore-not-found -o name)
[ -z "$left" ] || { echo "make undeploy left:"; echo "$left"; exit 1; }
gone deployment demomicroservice-sample || { echo "make undeploy left the sample's Deployment"; exit 1; }
echo "e2e: 6 passed, 0 failed"
