#!/usr/bin/env bash
# Starts ../shared/fakeapi (the API emulator of this project's CI) with rbuilder's layer over it
# (patched.py: Namespace objects, constant cost per request), on a free loopback port.
#   scripts/fakeapi/start.sh KUBECONFIG_OUT     prints the emulator's PID; stop it with `kill PID`
# FAKEAPI (default ../shared/fakeapi) is the emulator; FAKEAPI_VENV (default /tmp/fakeapi-venv)
# its Python environment, made on first use with the kmock version its README pins.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
fakeapi=$(cd "${FAKEAPI:-$here/../../../shared/fakeapi}" && pwd)
out=${1:?usage: start.sh KUBECONFIG_OUT}
venv=${FAKEAPI_VENV:-/tmp/fakeapi-venv}
if ! "$venv/bin/python" -c 'import kmock' 2>/dev/null; then
  python3 -m venv "$venv" >&2
  "$venv/bin/pip" install --quiet 'kmock==0.8' >&2
fi
log=$(mktemp /tmp/fakeapi.XXXXXX.log)
"$venv/bin/python" "$here/patched.py" "$fakeapi/fakeapi.py" 0 >"$log" 2>&1 &
pid=$!
url=''
for _ in $(seq 1 100); do
  url=$(sed -n 's/^listening \(http[^ ]*\).*/\1/p' "$log")
  [ -n "$url" ] && break
  kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; exit 1; }
  sleep 0.1
done
[ -n "$url" ] || { echo "the API emulator did not start; its log: $log" >&2; kill "$pid"; exit 1; }
# Plain HTTP without credentials: the emulator listens on loopback only and checks nothing.
cat >"$out" <<KUBECONFIG
apiVersion: v1
kind: Config
clusters:
- name: fakeapi
  cluster:
    server: ${url%/}
users:
- name: fakeapi
  user: {}
contexts:
- name: fakeapi
  context: {cluster: fakeapi, user: fakeapi, namespace: default}
current-context: fakeapi
KUBECONFIG
echo "$pid"
