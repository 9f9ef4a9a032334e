#!/usr/bin/env bash
# Starts the API emulator (emulator/kube_emulator) on a free loopback port, HTTPS, and writes a
# kubeconfig for it (its CA, an admin token, namespace default).
#   emulator/start.sh KUBECONFIG_OUT [AUTH_FILE]    prints the emulator's PID; stop it with `kill PID`
# AUTH_FILE is the table of tokens and rules that TokenReview and SubjectAccessReview answer
# from (see kube_emulator/auth.py). The emulator's log goes to KUBECONFIG_OUT.log.
# Python: EMULATOR_PYTHON, default target/venv/bin/python (made by `make tools`).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: start.sh KUBECONFIG_OUT [AUTH_FILE]}
auth=${2:-}
python=${EMULATOR_PYTHON:-$here/../target/venv/bin/python}
if ! "$python" -c 'import aiohttp, celpy, trustme, yaml' 2>/dev/null; then
  echo "the emulator's Python packages are missing from $python: run 'make tools'" >&2
  exit 1
fi
log=$out.log
rm -f "$out"
PYTHONPATH=$here${PYTHONPATH:+:$PYTHONPATH} "$python" -m kube_emulator --kubeconfig "$out" \
  ${auth:+--auth "$auth"} >"$log" 2>&1 &
pid=$!
for _ in $(seq 1 100); do
  grep -q '^listening ' "$log" && [ -s "$out" ] && break
  kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; exit 1; }
  sleep 0.1
done
grep -q '^listening ' "$log" || { echo "the API emulator did not start; its log: $log" >&2; kill "$pid"; exit 1; }
echo "$pid"
