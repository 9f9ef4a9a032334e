#!/usr/bin/env bash
# Prints what a user of a generated project waits for: cold `cargo build` and
# `cargo build --release` of the DemoMicroService example (a fresh target folder, crates
# already downloaded), an incremental rebuild after touching the reconciler, and the release
# binary's size. Takes several minutes; run it on an otherwise idle machine.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r examples/demo-microservice "$work/demo-microservice"
cd "$work/demo-microservice"
export CARGO_TARGET_DIR="$work/target"
cargo fetch --quiet

seconds() { local start=$SECONDS; "$@" >/dev/null 2>&1; echo $((SECONDS - start)); }

echo "cold cargo build:                 $(seconds cargo build --locked) s"
touch src/controller/demo_micro_service.rs
echo "rebuild after touching the reconciler: $(seconds cargo build --locked) s"
echo "cold cargo build --release:       $(seconds cargo build --locked --release) s"
size=$(stat -c %s "$CARGO_TARGET_DIR/release/demo-microservice")
echo "release binary size:              $((size / 1024 / 1024)) MiB ($size bytes)"
