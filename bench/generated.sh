#!/usr/bin/env bash
# Prints what a user of a generated project waits for: cold `cargo build` and
# `cargo build --release` of the DemoMicroService example (a fresh target folder, crates
# already downloaded), the rebuild after touching the controller (the edit loop: median of
# RUNS, default 5), and the release binary's size. Takes several minutes; run it on an
# otherwise idle machine.
#   bench/generated.sh [PROJECT]    (default: examples/demo-microservice)
set -euo pipefail
cd "$(dirname "$0")/.."
project=${1:-examples/demo-microservice}
runs=${RUNS:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$project" "$work/demo-microservice"
cd "$work/demo-microservice"
export CARGO_TARGET_DIR="$work/target"
cargo fetch --quiet

seconds() { local start=$SECONDS; "$@" >/dev/null 2>&1; echo $((SECONDS - start)); }

echo "cold cargo build:                 $(seconds cargo build --locked) s"
# Milliseconds, one rebuild after each touch; the median of the runs.
rebuild_ms() {
  touch src/controller/demo_micro_service.rs
  local start
  start=$(date +%s%N)
  cargo build --locked >/dev/null 2>&1
  echo $(( ($(date +%s%N) - start) / 1000000 ))
}
times=$(for _ in $(seq "$runs"); do rebuild_ms; done | sort -n)
median=$(echo "$times" | sed -n "$(( (runs + 1) / 2 ))p")
echo "rebuild after touching the controller: median ${median} ms of $runs (${times//$'\n'/ })"
echo "cold cargo build --release:       $(seconds cargo build --locked --release) s"
size=$(stat -c %s "$CARGO_TARGET_DIR/release/demo-microservice")
echo "release binary size:              $((size / 1024 / 1024)) MiB ($size bytes)"
