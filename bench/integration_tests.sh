#!/usr/bin/env bash
# Prints what a generated project's integration tests cost with one control plane for all of
# them (`Environment::shared`, as rbuilder generates them) and with one per test
# (`Environment::start`, as before 2026-12-08): the same golden tree built twice, the second
# copy with `shared` replaced by `start`; each test binary run RUNS times (default 3), one
# after the other. Each run's line, then the medians: wall time, and the machine's CPU time
# (user + system of every process, from /proc/stat: etcd and kube-apiserver are not the test
# binary's waited-for children), so run it on an otherwise idle machine.
#   bench/integration_tests.sh [TREE]
# TREE: a golden tree of testdata/ (default: kind-names, 20 integration tests of 12 kinds).
# The binaries are scripts/envtest-assets' (built the first time); builds in
# ~/.cache/rbuilder/ci-target, as rbuilder's CI does.
set -euo pipefail
cd "$(dirname "$0")/.."
tree=${1:-kind-names}
runs=${RUNS:-3}
export KUBEBUILDER_ASSETS
KUBEBUILDER_ASSETS=$(scripts/envtest-assets)
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/rbuilder/ci-target}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# copy NAME: the tree with the runtime it is generated with (the example's copy of it).
copy() {
  cp -r "testdata/$tree" "$work/$1"
  [ -d "$work/$1/runtime" ] || cp -r examples/demo-microservice/runtime "$work/$1/"
}
copy shared
copy own
grep -rl 'Environment::shared(' "$work/own/tests" | xargs -r sed -i 's/Environment::shared(/Environment::start(/'
# A package name of its own, for a build of its own in the shared target folder (cargo's file
# names do not tell two folders' packages of one name apart), with the library's name kept.
crate=$(sed -n 's/^name = "\(.*\)"/\1/p' "$work/own/Cargo.toml" | head -1)
sed -i "s/\"$crate\"/\"$crate-own\"/" "$work/own/Cargo.toml" "$work/own/Cargo.lock"
printf '\n[lib]\nname = "%s"\n' "${crate//-/_}" >>"$work/own/Cargo.toml"
[ ! -f "$work/own/manifests/Cargo.toml" ] ||
  sed -i "s/^$crate = { path/$crate = { package = \"$crate-own\", path/" "$work/own/manifests/Cargo.toml"

# binary NAME: builds the integration tests of copy NAME and prints the test binary's path.
binary() {
  (cd "$work/$1" && cargo test --locked --test integration --no-run --message-format=json 2>/dev/null) |
    python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "integration" and m.get("executable"):
        print(m["executable"])'
}
shared_bin=$(binary shared)
own_bin=$(binary own)

# cpu: the machine's CPU time so far, in clock ticks.
cpu() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 }' /proc/stat; }
ticks=$(getconf CLK_TCK)

# run NAME BINARY: one run; prints "NAME tests wall_s cpu_s".
run() {
  local start_cpu start end_cpu end out
  start_cpu=$(cpu) start=$(date +%s.%N)
  out=$(cd "$work/$1" && "$2" -q 2>&1) || { echo "$out" >&2; exit 1; }
  end=$(date +%s.%N)
  # The shared control plane is stopped after the binary exits: count that too.
  sleep 1
  end_cpu=$(cpu)
  local tests
  tests=$(echo "$out" | sed -n 's/^test result: ok. \([0-9]*\) passed.*/\1/p')
  echo "$1 $tests $(echo "$end - $start" | bc) $(echo "($end_cpu - $start_cpu) / $ticks - 1" | bc -l)"
}

echo "copy: tests, wall s, machine CPU s"
for _ in $(seq "$runs"); do
  run shared "$shared_bin"
  run own "$own_bin"
done | tee "$work/runs.txt"
echo "medians:"
for name in shared own; do
  grep "^$name " "$work/runs.txt" | awk -v name="$name" '
    { tests = $2; wall[NR] = $3; cpu[NR] = $4 }
    function median(a, n,   i, j, t) {
      for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
      return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    END { printf "  %s: %d tests, %.1f s wall, %.1f s CPU\n", name, tests, median(wall, NR), median(cpu, NR) }'
done
