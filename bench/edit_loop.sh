#!/usr/bin/env bash
#   bench/edit_loop.sh [PROJECT]    (default: examples/demo-microservice)
# What a user waits for after editing their controller: one line of the reconcile changed (a
# statement of `Reconciler::apply`, `let _edited = N;`, a new N each time: code, not a comment,
# which incremental builds would skip), then `cargo build`, `cargo test --no-run` and `cargo
# build --release`, each timed as a whole process, RUNS times (5), one edit before each; prints
# each command's median, minimum and maximum in milliseconds; and `cargo test --no-run` once more,
# timed after an untimed `cargo build` of the same edit, as a user who runs both waits for it.
# The project's own settings (its profiles, incremental builds in dev as cargo's default), in a
# copy of it with a target folder of its own (EDIT_LOOP_TARGET, default a new one: the first,
# untimed builds then compile every dependency, several minutes). Run it on an idle machine.
set -euo pipefail
cd "$(dirname "$0")/.."
project=${1:-examples/demo-microservice}
runs=${RUNS:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$project" "$work/project"
cd "$work/project"
export CARGO_TARGET_DIR=${EDIT_LOOP_TARGET:-$work/target}
controller=$(find src/controller -name '*.rs' ! -name mod.rs ! -name tests.rs | sort | head -1)

grep -q 'async fn apply(' "$controller" || {
  echo "error: no 'async fn apply(' in $controller to edit" >&2
  exit 1
}
# The first edit adds the statement as the first of apply's body, the next change its number.
edit() {
  if grep -q 'let _edited = ' "$controller"; then
    sed -i "s/let _edited = [0-9]*;/let _edited = $RANDOM;/" "$controller"
  else
    sed -i "/async fn apply(/a\\        let _edited = $RANDOM;" "$controller"
  fi
}
millis() {
  local start
  start=$(date +%s%N)
  "$@" >/dev/null 2>&1
  echo $((($(date +%s%N) - start) / 1000000))
}
# $(figures [--built] COMMAND...): "median (min-max) ms" of RUNS edits, each followed by
# COMMAND; with --built, by an untimed `cargo build` first.
figures() {
  local times built=false
  if [ "$1" = --built ]; then
    built=true
    shift
  fi
  times=$(for _ in $(seq "$runs"); do
    edit
    if $built; then cargo build --locked --quiet; fi
    millis "$@"
  done | sort -n)
  echo "$(echo "$times" | sed -n "$(((runs + 1) / 2))p") ms (min $(echo "$times" | head -1), max $(echo "$times" | tail -1))"
}

echo "project: $project ($controller edited), $runs runs, target folder $CARGO_TARGET_DIR" >&2
# Everything built once, untimed: what the edits below change is the project's crate only.
cargo build --locked --quiet
cargo test --locked --quiet --no-run
cargo build --locked --quiet --release
echo "cargo build after an edit:            $(figures cargo build --locked)"
echo "cargo test --no-run after an edit:    $(figures cargo test --locked --no-run)"
echo "cargo build --release after an edit:  $(figures cargo build --locked --release)"
# What `make run` then `make test` waits for the second time: the tests after the manager's
# build of the same edit (untimed), which they share the project's crate with.
echo "cargo test --no-run after the build:  $(figures --built cargo test --locked --no-run)"
