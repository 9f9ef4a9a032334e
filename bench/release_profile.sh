#!/usr/bin/env bash
# Prints, for release profiles a generated project could use, what its user waits for and
# ships: the cold `cargo build --release` (a fresh target folder, crates already downloaded),
# the release rebuild after an edit of the controller (what `make docker-build` pays on every
# code change: the Dockerfile caches the dependencies' layer, not the link), and the binary's
# size. The profiles differ only in link-time optimization (false: Cargo's default, LTO within
# each crate only) and codegen units, set through
# CARGO_PROFILE_RELEASE_* over the project's own [profile.release]. Takes about half an hour on
# 2 cores; run it on an otherwise idle machine.
#   bench/release_profile.sh [PROJECT]    (default: examples/demo-microservice)
set -euo pipefail
cd "$(dirname "$0")/.."
project=${1:-examples/demo-microservice}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$project" "$work/project"
cd "$work/project"
cargo fetch --quiet
bin=$(sed -n 's/^name = "\(.*\)"/\1/p' Cargo.toml | head -1)
controller=$(find src/controller -maxdepth 1 -name '*.rs' ! -name mod.rs | head -1)

seconds() { local start=$SECONDS; "$@" >/dev/null 2>&1; echo $((SECONDS - start)); }

# profile NAME LTO CODEGEN_UNITS
profile() {
  export CARGO_TARGET_DIR="$work/target-$1" CARGO_PROFILE_RELEASE_LTO=$2 \
    CARGO_PROFILE_RELEASE_CODEGEN_UNITS=$3
  local cold rebuild size
  cold=$(seconds cargo build --locked --release)
  touch "$controller"
  rebuild=$(seconds cargo build --locked --release)
  size=$(stat -c %s "$CARGO_TARGET_DIR/release/$bin")
  printf '%-34s cold %4d s   rebuild after an edit %4d s   binary %5.1f MiB\n' \
    "$1 (lto=$2, codegen-units=$3)" "$cold" "$rebuild" "$(echo "$size / 1048576" | bc -l)"
  rm -rf "$CARGO_TARGET_DIR"
}

echo "release profiles of $project (opt-level and strip as its Cargo.toml sets them):"
profile fat true 1
profile thin thin 16
profile no-cross-crate false 16
