#!/usr/bin/env bash
#   bench/peer.sh
# The DemoMicroService operator as rbuilder writes it beside the same operator as kubebuilder
# v4.16 writes it (`create api --plugins deploy-image/v1-alpha`, the same image, port and user),
# built and run in one go on this machine, against the same real API server. Prints one
# Markdown table, rbuilder's figure, kubebuilder's and their ratio (Rust / Go: below 1, Rust's is
# smaller or faster), then how each figure was taken. Nothing is asserted.
#
# What it measures, in order:
# - Scaffolding: each tool's `init` and `create api`, files written, median of RUNS. kubebuilder's
#   includes what it runs itself: `go get` and `go mod tidy` (the modules are already in
#   GOMODCACHE, but `go install controller-gen@v0.22.0` still asks the Go module proxy whether
#   the module is deprecated, so it needs the proxy), `make generate` and `make manifests`, which
#   build controller-gen into the project's bin/ with the user's GOCACHE (warm, as for anyone who
#   has built it once). rbuilder resolves no dependencies and generates no code there: Cargo
#   does that in the first build, which is counted in the cold build below.
# - Cold build of the manager (PEER_COLD=1, the default): empty build caches, a fresh
#   CARGO_TARGET_DIR for each Rust profile and a fresh GOCACHE (Go then compiles its standard
#   library too, as Go has shipped it uncompiled since 1.20; Rust's comes compiled with the
#   toolchain), with every dependency already downloaded (`cargo fetch`, `go mod tidy`) so no
#   network time is counted. Rust: `cargo build` (dev profile, the edit loop) and `cargo build
#   --release` (the generated Cargo.toml's release profile: opt-level "s", no cross-crate LTO,
#   stripped); Go: `CGO_ENABLED=0 go build`, as the generated Dockerfile builds it (Go has
#   one build, optimized; `make build` is the same `go build` after `make manifests generate fmt
#   vet`). The Rust project builds with examples/demo-microservice's Cargo.lock, the crate
#   versions the tests build, so the figures do not move with new crate releases.
#   PEER_COLD=0 reuses caches (target/peer and the user's GOCACHE) and skips these rows: for
#   developing this script.
# - Rebuild after an edit of the controller file (src/controller/demo_micro_service.rs,
#   internal/controller/demomicroservice_controller.go): a comment line appended, since Go's
#   cache keys are file contents and a mere touch rebuilds nothing; median of RUNS.
# - Binary size: Rust's release binary; Go's as the Dockerfile builds it (symbols and DWARF
#   kept), and with -ldflags "-s -w" (stripped, as Rust's release profile strips).
# - Running, each operator alone against a fresh control plane (scripts/control-plane: etcd,
#   kube-apiserver and kube-controller-manager of scripts/envtest-assets, on this machine; no
#   kubelet, so Pods stay Pending and the figures end at the Deployment): the time from starting
#   the manager to its first 200 on /readyz (median of RUNS + 1 starts), and to the Deployment
#   of a DemoMicroService that existed before it started (caches synced and one reconcile); the
#   resident memory idle (5 s after start) and with PEER_OBJECTS (1000) DemoMicroServices and
#   their Deployments; create-to-Deployment p50, p95 and max over those, created one at a time
#   by bench/operator_load.py; the manager's CPU time (user + system, from its start to 2 s
#   after the last Deployment appeared); and from each manager's own /metrics, the requests it
#   made to the API server and its reconciles.
#   Both run as `make run` runs them: out of the cluster, with the control plane's admin
#   kubeconfig (system:masters, so RBAC allows everything to both, at the same cost), without
#   leader election (controller-runtime cannot find a namespace for its Lease out of a
#   cluster), on free loopback ports, with the metrics on HTTPS behind authentication and
#   authorization as deployed (read here with a ServiceAccount token), and with the log each
#   writes by default (kubebuilder's: zap development mode, debug level).
#
# Environment: PEER_OBJECTS (1000), RUNS (3), PEER_COLD (1), TIME_LIMIT (900 s, for the creates
# of each operator). Needs cargo, go, python3, openssl, curl, and the binaries of
# scripts/envtest-assets; builds rbuilder (release) and kubebuilder (scripts/kubebuilder).
# The full run takes 20 to 40 minutes on 2 cores, mostly the cold and release builds; run it on
# an otherwise idle machine, or read its figures as taken under that load (it prints the load
# average at the start and the end).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
objects=${PEER_OBJECTS:-1000}
runs=${RUNS:-3}
cold=${PEER_COLD:-1}
time_limit=${TIME_LIMIT:-900}
# shellcheck source=bench/demo_projects.sh
. bench/demo_projects.sh
image=$demo_image
for tool in cargo go python3 openssl curl; do
  command -v "$tool" >/dev/null || { echo "error: $tool is needed" >&2; exit 1; }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/rbuilder-peer.XXXXXX")
control_plane='' manager='' poller=''
stop() { # PID: SIGTERM, then wait for it
  kill "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}
logs=$repo/target/peer-logs
cleanup() {
  for pid in "$poller" "$manager" "$control_plane"; do [ -z "$pid" ] || stop "$pid"; done
  # The managers' logs and metrics, and the build and scaffold logs, kept for a look (the last
  # run's only); the rest goes: the projects, build caches and control planes.
  rm -rf "$logs"
  mkdir -p "$logs"
  cp "$work"/*.log "$work"/*.txt "$logs/" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM # run the EXIT trap on Ctrl-C and kill too

say() { echo "peer: $*" >&2; }
now_ns() { date +%s%N; }
# run LOG COMMAND...: COMMAND with its output in LOG; if it fails, the end of LOG, and exit.
run() {
  local log=$1
  shift
  "$@" >"$log" 2>&1 || {
    echo "error: $* failed; the end of its output ($log):" >&2
    tail -n 30 "$log" >&2
    exit 1
  }
}
# timed_ms LOG COMMAND...: prints how many milliseconds COMMAND took (see run).
timed_ms() {
  local start
  start=$(now_ns)
  run "$@"
  echo $((($(now_ns) - start) / 1000000))
}
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
load() { cut -d ' ' -f 1-3 /proc/loadavg; }

# The figures, by "rust.NAME" and "go.NAME"; the table at the end lays them out.
declare -A fig
load_start=$(load)
started_at=$(date -u '+%Y-%m-%d %H:%M UTC')

# --- The tools ----------------------------------------------------------------------------------
say "building rbuilder (release) and kubebuilder; the control plane's binaries"
run "$work/rbuilder-build.log" cargo build --release --locked --bin rbuilder
rbuilder=$repo/target/release/rbuilder
kubebuilder=$("$repo/scripts/kubebuilder")
assets=$("$repo/scripts/envtest-assets")
export PATH=$assets:$PATH # kubectl of the API server's version
rbuilder_version=$("$rbuilder" version 2>/dev/null | head -n 1 || true)
kubebuilder_version=$("$kubebuilder" version | awk '/KubeBuilder:/ { print $2 }')

# --- Scaffolding (bench/demo_projects.sh) -------------------------------------------------------
say "scaffolding, $runs times each"
rust_times=() go_times=()
for i in $(seq "$runs"); do
  # The folder's name is the project's name for both tools.
  rust_project=$work/scaffold-$i/rust/demo-microservice
  go_project=$work/scaffold-$i/go/demo-microservice
  rust_times+=("$(timed_ms "$work/scaffold-rust.log" scaffold_rust "$rust_project")")
  go_times+=("$(timed_ms "$work/scaffold-go.log" scaffold_go "$go_project")")
done
fig[rust.scaffold]=$(printf '%s\n' "${rust_times[@]}" | median)
fig[go.scaffold]=$(printf '%s\n' "${go_times[@]}" | median)
# The last ones are built and run.

# The one edit that makes kubebuilder's controller work at all (see fix_go_port_name).
port_name_fix=$(fix_go_port_name "$go_project")

# --- Builds -------------------------------------------------------------------------------------
# The crate versions rbuilder wrote into the project's Cargo.lock (the ones its tests build);
# `cargo fetch` downloads whatever is missing, outside the timings.
(cd "$rust_project" && run "$work/cargo-fetch.log" cargo fetch)
(cd "$go_project" && run "$work/go-download.log" go mod download)
if [ "$cold" = 1 ]; then
  rust_debug_target=$work/cargo-debug rust_release_target=$work/cargo-release
  go_cache=$work/gocache
else
  rust_debug_target=$repo/target/peer rust_release_target=$repo/target/peer
  go_cache=$(go env GOCACHE)
fi
cargo_build() { # TARGET_DIR [FLAGS...]
  (cd "$rust_project" && CARGO_TARGET_DIR=$1 cargo build --locked --bin demo-microservice "${@:2}")
}
go_build() { # OUTPUT [FLAGS...]: as the generated Dockerfile builds the manager
  (cd "$go_project" && CGO_ENABLED=0 GOCACHE=$go_cache go build "${@:2}" -o "$1" ./cmd/main.go)
}
build_all() { # PREFIX: builds each, figures as PREFIX.NAME in milliseconds
  fig[rust.$1_debug]=$(timed_ms "$work/build.log" cargo_build "$rust_debug_target")
  fig[rust.$1_release]=$(timed_ms "$work/build.log" cargo_build "$rust_release_target" --release)
  fig[go.$1]=$(timed_ms "$work/build.log" go_build "$work/go-manager")
}
if [ "$cold" = 1 ]; then
  say "cold builds (empty caches)"
else
  say "builds (PEER_COLD=0: caches reused, no cold-build figures)"
fi
build_all cold
fig[go.cold_debug]=${fig[go.cold]} fig[go.cold_release]=${fig[go.cold]}
if [ "$cold" != 1 ]; then unset 'fig[rust.cold_debug]' 'fig[rust.cold_release]' 'fig[go.cold_debug]' 'fig[go.cold_release]'; fi

say "rebuilds after an edit of the controller, $runs times"
debug=() release=() gos=()
for i in $(seq "$runs"); do
  echo "// peer.sh edit $i" >>"$rust_project/src/controller/demo_micro_service.rs"
  echo "// peer.sh edit $i" >>"$go_project/internal/controller/demomicroservice_controller.go"
  build_all rebuild
  debug+=("${fig[rust.rebuild_debug]}") release+=("${fig[rust.rebuild_release]}") gos+=("${fig[go.rebuild]}")
done
fig[rust.rebuild_debug]=$(printf '%s\n' "${debug[@]}" | median)
fig[rust.rebuild_release]=$(printf '%s\n' "${release[@]}" | median)
fig[go.rebuild_debug]=$(printf '%s\n' "${gos[@]}" | median)
fig[go.rebuild_release]=${fig[go.rebuild_debug]}

cp "$rust_release_target/release/demo-microservice" "$work/rust-manager"
run "$work/build.log" go_build "$work/go-manager-stripped" -ldflags "-s -w"
fig[rust.size]=$(stat -c %s "$work/rust-manager")
fig[go.size]=$(stat -c %s "$work/go-manager")
fig[rust.size_stripped]=${fig[rust.size]}
fig[go.size_stripped]=$(stat -c %s "$work/go-manager-stripped")

# --- Running ------------------------------------------------------------------------------------
kib() { awk -v key="$1:" '$1 == key { print $2 }' "/proc/$manager/status"; }
cpu_ms() { # utime + stime, fields 14 and 15 (the command name in field 2 has no spaces)
  awk -v hz="$(getconf CLK_TCK)" '{ print int(($14 + $15) * 1000 / hz) }' "/proc/$manager/stat"
}

# start_manager NAME [SPEC]: starts NAME's manager ($manager) on new ports and sets
# $ready_ms; with SPEC, creates the DemoMicroService bench-first first and sets $first_ms.
start_manager() {
  local name=$1 spec=${2:-} t0 out=$work/startup.out
  probe_port=$(free_port) metrics_port=$(free_port)
  rm -f "$work/started"
  # -B: no __pycache__ of operator_load.py, which it imports, left in bench/.
  python3 -B bench/operator_startup.py "$KUBECONFIG" "http://127.0.0.1:$probe_port/readyz" \
    "$work/started" ${spec:+--first "$spec"} >"$out" &
  poller=$!
  until [ -e "$work/started" ]; do
    kill -0 "$poller" 2>/dev/null || { echo "error: operator_startup.py failed" >&2; exit 1; }
    sleep 0.01
  done
  # The environment each manager is given as deployed (kubebuilder's takes its operand's image
  # from it, config/manager/manager.yaml), and the flags both have. --kube-api-qps=0: no
  # client-side limit in either (controller-runtime v0.25 sets none; rbuilder's default is 20 a
  # second, which would pace the Rust manager alone).
  local environment=() flags=(--kube-api-qps=0)
  [ "$name" = go ] && environment=(DEMOMICROSERVICE_IMAGE="$image") flags=()
  t0=$(now_ns)
  env "${environment[@]}" "$work/$name-manager" "${flags[@]}" \
    --health-probe-bind-address="127.0.0.1:$probe_port" \
    --metrics-bind-address="127.0.0.1:$metrics_port" >>"$work/$name-manager.log" 2>&1 &
  manager=$!
  wait "$poller" || {
    echo "error: the $name manager did not get ready; its log:" >&2
    tail -n 30 "$work/$name-manager.log" >&2
    exit 1
  }
  poller=''
  ready_ms=$((($(awk '$1 == "ready" { print $2 }' "$out") - t0) / 1000000))
  [ -z "$spec" ] || first_ms=$((($(awk '$1 == "first" { print $2 }' "$out") - t0) / 1000000))
}

# metric FILE NAME LABEL=VALUE: the sum of NAME's samples with that label in FILE ("" for all).
metric() {
  awk -v name="$2" -v label="$3" '
    index($0, name "{") == 1 && (label == "" || index($0, label) > 0) { sum += $NF }
    END { printf "%d\n", sum }' "$1"
}

# measure NAME CRD_DIR SPEC: one operator on a control plane of its own.
measure() {
  local name=$1 crds=$2 spec=$3 ready=() token load_out=$work/$1-load.txt
  say "$name: control plane"
  KUBEBUILDER_ASSETS=$assets scripts/control-plane "$work/control-plane-$name" &
  control_plane=$!
  for _ in $(seq 1 1200); do
    [ -e "$work/control-plane-$name/ready" ] && break
    kill -0 "$control_plane" 2>/dev/null || { echo "error: the control plane did not start" >&2; exit 1; }
    sleep 0.1
  done
  export KUBECONFIG=$work/control-plane-$name/kubeconfig
  kubectl apply --server-side -f "$crds" >/dev/null
  kubectl wait --for condition=Established crd/demomicroservices.devops.my.domain >/dev/null
  # Pods need the namespace's ServiceAccount, which kube-controller-manager creates at its
  # start; its token reads the metrics.
  for _ in $(seq 1 100); do
    kubectl get serviceaccount default >/dev/null 2>&1 && break
    sleep 0.1
  done
  kubectl create clusterrole peer-metrics-reader --verb get --non-resource-url /metrics >/dev/null
  kubectl create clusterrolebinding peer-metrics-reader --clusterrole peer-metrics-reader \
    --serviceaccount default:default >/dev/null
  token=$(kubectl create token default --duration 2h)

  say "$name: $runs starts to /readyz, then one with a DemoMicroService waiting"
  for _ in $(seq "$runs"); do
    start_manager "$name"
    ready+=("$ready_ms")
    stop "$manager"
    manager=''
  done
  start_manager "$name" "$spec"
  ready+=("$ready_ms")
  fig[$name.ready]=$(printf '%s\n' "${ready[@]}" | median)
  fig[$name.first]=$first_ms
  sleep 5
  kill -0 "$manager" 2>/dev/null || { echo "error: the $name manager exited; its log:" >&2; tail -n 30 "$work/$name-manager.log" >&2; exit 1; }
  fig[$name.idle_rss]=$(kib VmRSS)

  say "$name: $objects DemoMicroServices, one at a time"
  python3 bench/operator_load.py "$KUBECONFIG" "$objects" "$time_limit" --spec "$spec" \
    --results "$load_out" >&2 || {
    echo "error: the load failed; the $name manager's log (last lines):" >&2
    tail -n 30 "$work/$name-manager.log" >&2
    exit 1
  }
  # Let the reconciles that follow the last Deployment (status updates) finish.
  sleep 2
  fig[$name.loaded_rss]=$(kib VmRSS)
  fig[$name.peak_rss]=$(kib VmHWM)
  fig[$name.cpu]=$(cpu_ms)
  for figure in p50 p95 max rtt_before rtt_after; do
    fig[$name.$figure]=$(awk -v key="$figure" '$1 == key { print $2 }' "$load_out")
  done
  curl --silent --show-error --fail --insecure -H "Authorization: Bearer $token" \
    "https://127.0.0.1:$metrics_port/metrics" >"$work/$name-metrics.txt"
  local requests=rest_client_requests_total reconciles=controller_runtime_reconcile_total
  fig[$name.requests]=$(metric "$work/$name-metrics.txt" "$requests" "")
  for method in GET POST PUT PATCH DELETE; do
    fig[$name.requests_$method]=$(metric "$work/$name-metrics.txt" "$requests" "method=\"$method\"")
  done
  fig[$name.reconciles]=$(metric "$work/$name-metrics.txt" "$reconciles" "")
  fig[$name.reconcile_errors]=$(metric "$work/$name-metrics.txt" "$reconciles" 'result="error"')
  fig[$name.log_lines]=$(wc -l <"$work/$name-manager.log")
  stop "$manager"
  manager=''
  stop "$control_plane"
  control_plane=''
}
measure rust "$rust_project/config/crd/bases" "$demo_spec_rust"
measure go "$go_project/config/crd/bases" "$demo_spec_go"
apiserver=$("$assets/kube-apiserver" --version | awk '{ print $2 }')

# --- The table ----------------------------------------------------------------------------------
# row LABEL KEY UNIT: UNIT is s or s2 (from milliseconds, 1 or 2 decimals), ms, mib (from
# bytes), kib-mib (from KiB), count.
row() {
  local rust=${fig[rust.$2]:-} go=${fig[go.$2]:-}
  awk -v label="$1" -v rust="$rust" -v go="$go" -v unit="$3" '
    function show(v) {
      if (v == "") return "–"
      if (unit == "s") return sprintf("%.1f s", v / 1000)
      if (unit == "s2") return sprintf("%.2f s", v / 1000)
      if (unit == "ms") return sprintf("%.1f ms", v)
      if (unit == "mib") return sprintf("%.1f MiB", v / 1048576)
      if (unit == "kib-mib") return sprintf("%.1f MiB", v / 1024)
      return sprintf("%d", v)
    }
    BEGIN {
      ratio = (rust == "" || go == "" || go == 0) ? "–" : sprintf("%.2f", rust / go)
      printf "| %s | %s | %s | %s |\n", label, show(rust), show(go), ratio
    }'
}
echo
echo "== bench/peer.sh, $started_at: ${rbuilder_version:-rbuilder (release build)} ($(git rev-parse --short HEAD)) against kubebuilder $kubebuilder_version, kube-apiserver $apiserver"
echo "   PEER_OBJECTS=$objects RUNS=$runs PEER_COLD=$cold; $(nproc) cores; load average at the start $load_start, at the end $(load)"
echo
echo "| Figure | rbuilder (Rust) | kubebuilder (Go) | Rust/Go |"
echo "|---|---|---|---|"
row "scaffold: init + create api (median of $runs)" scaffold s2
row "cold build, dev profile (Go: go build)" cold_debug s
row "cold build, release (Go: go build)" cold_release s
row "rebuild after an edit of the controller, dev (median)" rebuild_debug s
row "rebuild after an edit of the controller, release (median)" rebuild_release s
row "binary size, release (Go: as its Dockerfile builds)" size mib
row "binary size, stripped (Go: -ldflags \"-s -w\")" size_stripped mib
row "start -> /readyz 200 (median of $((runs + 1)))" ready ms
row "start -> first Deployment (1 waiting object)" first ms
row "idle RSS (5 s after start)" idle_rss kib-mib
row "RSS with $objects objects" loaded_rss kib-mib
row "peak RSS" peak_rss kib-mib
row "create -> Deployment p50" p50 ms
row "create -> Deployment p95" p95 ms
row "create -> Deployment max" max ms
row "manager CPU time, whole run" cpu s
row "API requests made (rest_client_requests_total)" requests count
for method in GET POST PUT PATCH DELETE; do row "  $method" "requests_$method" count; done
row "reconciles (controller_runtime_reconcile_total)" reconciles count
row "  of which errors" reconcile_errors count
row "log lines written" log_lines count
row "API server GET round trip before the creates" rtt_before ms
row "  ... after the creates" rtt_after ms
echo
echo "Scaffold: each tool's init + create api; kubebuilder's runs go mod tidy, make generate and make manifests (warm GOCACHE)."
if [ "$cold" = 1 ]; then
  echo "Cold builds: fresh CARGO_TARGET_DIR per profile and a fresh GOCACHE, dependencies downloaded beforehand; Go builds once (CGO_ENABLED=0 go build, the Dockerfile's), so both cold rows hold the same Go figure."
else
  echo "PEER_COLD=0: caches reused, no cold builds; the rebuilds are against warm caches as always."
fi
echo "Rust release profile as generated: opt-level \"s\", strip = true (Cargo's default lto and codegen-units)."
echo "Logs of this run (managers, metrics, builds): ${logs#"$repo"/}/"
echo "Both managers out of the cluster with the admin kubeconfig, no leader election, secure metrics; $objects objects plus bench-first; RSS and CPU from /proc."
if [ -n "$port_name_fix" ]; then
  echo "kubebuilder's controller edited once: its container port name cut to 15 characters (\"demomicroservic\", as rbuilder names it); as generated, the API server refuses its Deployments."
fi
