#!/usr/bin/env bash
# Prints how long scaffolding takes: `rbuilder init`, `create api` on a new project, and
# `create api` on a project that already has 50 resources (it must not slow down as a
# project grows). Uses hyperfine (Debian: apt-get install hyperfine) and a release build.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v hyperfine >/dev/null || { echo "error: hyperfine is needed: apt-get install hyperfine" >&2; exit 1; }
cargo build --release --quiet
bin="$PWD/target/release/rbuilder"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
runs=${RUNS:-200}

echo "== rbuilder init ($runs runs)"
hyperfine --warmup 5 --runs "$runs" --style basic \
  --prepare "rm -rf $work/init && mkdir $work/init" \
  "cd $work/init && $bin init --domain my.domain" | grep -E "Time|Range"

echo "== rbuilder create api on a new project"
mkdir "$work/base" && (cd "$work/base" && "$bin" init --domain my.domain >/dev/null)
hyperfine --warmup 5 --runs "$runs" --style basic \
  --prepare "rm -rf $work/api && cp -r $work/base $work/api" \
  "cd $work/api && $bin create api --group devops --kind DemoMicroService --image stefanprodan/podinfo:6.7.1 --image-container-port 9898" | grep -E "Time|Range"

echo "== rbuilder create api on a project with 50 resources"
mkdir "$work/big" && cd "$work/big" && "$bin" init --domain my.domain >/dev/null
for i in $(seq 1 50); do "$bin" create api --group devops --kind "Kind$i" >/dev/null; done
cd - >/dev/null
hyperfine --warmup 5 --runs "$runs" --style basic \
  --prepare "rm -rf $work/big2 && cp -r $work/big $work/big2" \
  "cd $work/big2 && $bin create api --group devops --kind DemoMicroService" | grep -E "Time|Range"
