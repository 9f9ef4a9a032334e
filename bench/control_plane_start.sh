#!/usr/bin/env bash
# Prints what a test control plane costs to start, as rbuilder-testing's envtest starts one for
# each integration test: the CPU time of kube-apiserver and etcd from kube-apiserver's start
# until /readyz answers "ok", then until a project's CRDs are served, and kube-apiserver's peak
# memory; with Go's default runtime settings and with those the envtest sets
# (runtime/testing/src/envtest/process.rs: GOMAXPROCS=1 GOGC=400), one after the other, RUNS
# times (default 5). Each run's line, then the medians.
#   bench/control_plane_start.sh [CRD_FOLDER]
# CRD_FOLDER: the CRDs to install (default: testdata/kind-names/config/crd/bases, 12 CRDs).
# The binaries are scripts/envtest-assets' (built the first time); needs openssl and kubectl.
set -euo pipefail
cd "$(dirname "$0")/.."
crds=$(realpath "${1:-testdata/kind-names/config/crd/bases}")
assets=$(scripts/envtest-assets)
runs=${RUNS:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# A CA, kube-apiserver's serving certificate, the ServiceAccount signing key, and a token of
# the admin's for kubectl (a static token file: this script's own shortcut, not envtest's).
cd "$work"
openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -subj /CN=ca -days 1 2>/dev/null
openssl req -newkey rsa:2048 -nodes -keyout serving.key -out serving.csr -subj /CN=apiserver 2>/dev/null
echo "subjectAltName=IP:127.0.0.1" >serving.ext
openssl x509 -req -in serving.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out serving.crt \
  -days 1 -extfile serving.ext 2>/dev/null
openssl genrsa -out sa.key 2048 2>/dev/null
openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
echo "bench-token,bench-admin,1,system:masters" >tokens.csv

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# cpu PID: its user and system CPU time so far, in seconds.
cpu() { awk '{ print ($14 + $15) / 100 }' "/proc/$1/stat"; }

# start SETTINGS: one start with SETTINGS ("default", or VAR=VALUE... in the Go processes'
# environment); prints "SETTINGS ready_cpu served_cpu peak_MiB".
start() {
  # "default": Go's own, whatever this shell's environment sets.
  local settings=$1 env=(-u GOMAXPROCS -u GOGC)
  [ "$settings" = default ] || read -ra env <<<"$settings"
  local etcd_port peer_port api_port
  etcd_port=$(free_port) peer_port=$(free_port) api_port=$(free_port)
  rm -rf etcd
  env "${env[@]}" "$assets/etcd" --data-dir=etcd --unsafe-no-fsync=true \
    --listen-client-urls="http://127.0.0.1:$etcd_port" \
    --advertise-client-urls="http://127.0.0.1:$etcd_port" \
    --listen-peer-urls="http://127.0.0.1:$peer_port" >etcd.log 2>&1 &
  local etcd=$!
  until curl -s "http://127.0.0.1:$etcd_port/health" | grep -q true; do sleep 0.05; done
  env "${env[@]}" "$assets/kube-apiserver" --etcd-servers="http://127.0.0.1:$etcd_port" \
    --bind-address=127.0.0.1 --secure-port="$api_port" \
    --tls-cert-file=serving.crt --tls-private-key-file=serving.key --client-ca-file=ca.crt \
    --authorization-mode=RBAC --service-cluster-ip-range=10.0.0.0/24 --allow-privileged=true \
    --disable-admission-plugins=ServiceAccount --endpoint-reconciler-type=none \
    --token-auth-file=tokens.csv --service-account-issuer="https://127.0.0.1:$api_port" \
    --service-account-key-file=sa.pub --service-account-signing-key-file=sa.key \
    >kube-apiserver.log 2>&1 &
  local apiserver=$!
  until [ "$(curl -sk "https://127.0.0.1:$api_port/readyz")" = ok ]; do sleep 0.05; done
  local ready
  ready=$(echo "$(cpu "$apiserver") + $(cpu "$etcd")" | bc)
  local kubectl=(kubectl --server="https://127.0.0.1:$api_port" --certificate-authority=ca.crt
    --token=bench-token)
  "${kubectl[@]}" apply --server-side -f "$crds" >/dev/null
  "${kubectl[@]}" wait --for=condition=Established crd --all >/dev/null
  # The API server publishes a new CRD's OpenAPI after it is Established.
  sleep 1
  local served peak
  served=$(echo "$(cpu "$apiserver") + $(cpu "$etcd")" | bc)
  peak=$(awk '/VmHWM/ { printf "%d", $2 / 1024 }' "/proc/$apiserver/status")
  # As the envtest stops them (SIGKILL: the data is thrown away), the API server first.
  kill -KILL "$apiserver" && wait "$apiserver" 2>/dev/null || true
  kill -KILL "$etcd" && wait "$etcd" 2>/dev/null || true
  echo "$settings $ready $served $peak"
}

echo "settings: CPU s until ready, CPU s until $(find "$crds" -name '*.yaml' | wc -l) CRDs served, kube-apiserver peak MiB"
for _ in $(seq "$runs"); do
  start default
  start "GOMAXPROCS=1 GOGC=400"
done | tee runs.txt
echo "medians:"
for settings in "default" "GOMAXPROCS=1 GOGC=400"; do
  grep "^$settings [0-9]" runs.txt | awk -v s="$settings" '
    { ready[NR] = $(NF - 2); served[NR] = $(NF - 1); peak[NR] = $NF }
    function median(a, n,   i, j, t) {
      for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
      return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    END { printf "  %s: %.2f s ready, %.2f s served, %d MiB\n", s, median(ready, NR), median(served, NR), median(peak, NR) }'
done
