#!/usr/bin/env bash
# Prints how long scaffolding takes, files written (whole process, cd included): `rbuilder
# init`, `create api` on a new project (a plain kind, and a deploy-image kind, which renders the
# most), and `create api` on a project that already has 50 resources (it must not slow down as
# a project grows). Uses hyperfine (Debian: apt-get install hyperfine) and a release build.
#   bench/scaffold.sh [OTHER_RBUILDER]
# With OTHER_RBUILDER (e.g. a release build of an older commit), each command is timed with both
# binaries in one hyperfine run, which prints how many times faster one is.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v hyperfine >/dev/null || { echo "error: hyperfine is needed: apt-get install hyperfine" >&2; exit 1; }
other=${1:+$(realpath "$1")}
cargo build --release --quiet
bin="$PWD/target/release/rbuilder"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
runs=${RUNS:-100}

# bench NAME PREPARE COMMAND: COMMAND run in $work/run after PREPARE, with {bin} replaced by
# this build (and by OTHER_RBUILDER too, if given).
bench() {
  local commands=("${3//\{bin\}/$bin}")
  if [ -n "$other" ]; then commands+=("${3//\{bin\}/$other}"); fi
  echo "== $1 ($runs runs)"
  hyperfine --warmup 5 --runs "$runs" --style basic --prepare "$2" "${commands[@]}" |
    grep -E "Benchmark|Time|Range|faster|±"
}

mkdir "$work/base" && (cd "$work/base" && "$bin" init --domain my.domain >/dev/null)
mkdir "$work/big" && (cd "$work/big" && "$bin" init --domain my.domain >/dev/null &&
  for i in $(seq 1 50); do "$bin" create api --group devops --kind "Kind$i" >/dev/null; done)

bench "rbuilder init" "rm -rf $work/run && mkdir $work/run" \
  "cd $work/run && {bin} init --domain my.domain"
bench "rbuilder create api, a plain kind, on a new project" "rm -rf $work/run && cp -r $work/base $work/run" \
  "cd $work/run && {bin} create api --group devops --kind Guestbook"
bench "rbuilder create api, a deploy-image kind, on a new project" "rm -rf $work/run && cp -r $work/base $work/run" \
  "cd $work/run && {bin} create api --group devops --kind DemoMicroService --image stefanprodan/podinfo:6.7.1 --image-container-port 9898"
bench "rbuilder create api on a project with 50 resources" "rm -rf $work/run && cp -r $work/big $work/run" \
  "cd $work/run && {bin} create api --group devops --kind DemoMicroService"
