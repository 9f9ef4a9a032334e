#!/usr/bin/env bash
#   bench/scale.sh
# The DemoMicroService operator as rbuilder writes it beside the same operator as kubebuilder
# v4.16 writes it (bench/demo_projects.sh), at scale: SCALE_OBJECTS (10000) DemoMicroServices
# whose Deployments run on simulated nodes, on the same control plane build (scripts/control-plane
# with CONTROL_PLANE_NODES: etcd, kube-apiserver, kube-controller-manager, kube-scheduler and
# KWOK), a fresh control plane for each run, RUNS (3) runs of each operator, taken in turns (Rust,
# Go, Rust, ...) so that a change of the machine's load falls on both. Prints the medians side by
# side, as a Markdown table, with the settings both ran with and each tool's default where it
# differs. Nothing is asserted.
#
# Each run:
# 1. The manager starts (out of the cluster, as `make run` runs it, with the control plane's
#    admin kubeconfig, no leader election, metrics on plain HTTP so that reading them costs the
#    API server nothing) and answers /readyz.
# 2. bench/scale_load.py creates the objects in `default`, one request after the other as fast
#    as the API server takes them (or SCALE_RATE a second), while it watches the Deployments:
#    - create -> Deployment p50, p95, p99: from just before each POST to the watch event that
#      brings its Deployment. With a burst of thousands, this is mostly the time an object waits
#      in the operator's queue: it reads as throughput more than as one reconcile's latency.
#    - first create -> all Deployments Available: until the watch has shown each Deployment's
#      Available condition True (its Pod bound by kube-scheduler, reported Ready by KWOK).
# 3. The run then waits SCALE_SETTLE (65 s) after the last create, and until the operator's
#    writes have stopped for 3 s: kubebuilder's controller requeues each object a minute after
#    creating its Deployment, and those reconciles' writes belong to the object's cost.
#    - peak RSS (VmHWM) and CPU seconds (user + system) of the manager, from /proc, its start
#      included;
#    - reconciles per object: the manager's controller_runtime_reconcile_total, every result;
#    - API requests per object, reads and writes, from the API server's own count
#      (apiserver_request_total, before and after: scale_load.py delta says what is counted as the
#      operator's), and the Events about DemoMicroServices (the API server's count of Events
#      mixes in those of kube-controller-manager and kube-scheduler, so they are counted as
#      objects: scale_load.py events).
# 4. The manager is stopped (SIGTERM) and started again with the N objects settled:
#    - start -> /readyz 200, start -> first reconcile (controller_runtime_reconcile_total above
#      0 in its /metrics, polled every 5 ms);
#    - the writes it makes from its start until it has reconciled every object once and its
#      writes have stopped for 3 s (a settled object needs none).
#
# Both managers are configured alike where the table compares them (the table prints the
# settings and the defaults):
# - reconcile concurrency SCALE_CONCURRENCY (10): kubebuilder's default is 1 worker, rbuilder's
#   Reconciler::MAX_CONCURRENT_RECONCILES as the project has it (1 unless the controller sets it);
#   set in kubebuilder's cmd/main.go (the manager's Controller options) and in rbuilder's
#   controller (the constant, added or changed);
# - log level info: kubebuilder's default is zap's development mode (debug level, stack traces
#   from warnings), turned off with --zap-devel=false; rbuilder's default is info;
# - cache contents: both cache every DemoMicroService and their Deployments, without
#   managedFields: kubebuilder's manager keeps them by default, set here in cmd/main.go (the
#   cache's DefaultTransform), rbuilder's runtime strips them by default. kubebuilder's caches
#   every Deployment of the cluster, rbuilder's only those labelled as its own: the same objects
#   here, where the operator's are the only Deployments. (kubebuilder's controller as generated
#   puts no label on its Deployments, so its cache cannot be narrowed to them without changing
#   the controller.)
# - client-side rate limit: none in either: controller-runtime v0.25 sets none (its GetConfig
#   leaves the bound to the API server's Priority and Fairness), nor does rbuilder's manager by
#   default since 2026-12-06; it is run with --kube-api-qps=0 anyway, so that runs of an older
#   runtime (whose default was 20 a second after a burst of 30, which would make the run about
#   the limit) compare.
# kubebuilder's controller otherwise runs as generated, with the port name fix of
# bench/demo_projects.sh.
#
# Environment: SCALE_OBJECTS (10000), RUNS (3), SCALE_CONCURRENCY (10), SCALE_RATE (0: as fast
# as possible), SCALE_SETTLE (65 s), TIME_LIMIT (3600 s, for each run's creates), SCALE_OPERATORS
# ("rust go"; "rust" alone to try a change of the Rust operator: the Go column then shows "–"),
# SCALE_PROFILE (unset; 1: the Rust manager built with symbols and frame pointers, in
# target/profiling, and run under `perf record -g` at 499 Hz: its perf.data in each run's logs, and
# `perf report --no-children` of each, top 60 lines, as perf-*-report.txt beside it; its CPU figure
# then includes perf's small cost, so read the profile, not the table). The nodes:
# enough of them at 110 Pods each for 1.3 times the objects. Needs cargo, go, python3, openssl,
# curl, and builds rbuilder, kubebuilder (scripts/kubebuilder), the control plane's binaries
# (scripts/envtest-assets) and KWOK (scripts/kwok) if they are not built yet. 10,000 objects took
# about 9 minutes a run on 2 otherwise idle cores (55 minutes for three runs of each, the
# binaries built), most of it the creates and the simulated cluster's Pods, and 14 to 25 minutes
# a run beside other builds (load average 14 to 18): run it on an otherwise idle machine, or read
# its figures as taken under that load (it prints the load average).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
objects=${SCALE_OBJECTS:-10000}
runs=${RUNS:-3}
concurrency=${SCALE_CONCURRENCY:-10}
rate=${SCALE_RATE:-0}
settle=${SCALE_SETTLE:-65}
time_limit=${TIME_LIMIT:-3600}
operators=${SCALE_OPERATORS:-rust go}
profile=${SCALE_PROFILE:-}
node_pods=110
nodes=$(((objects * 13 / 10 + node_pods - 1) / node_pods))
for tool in cargo go python3 openssl curl; do
  command -v "$tool" >/dev/null || { echo "error: $tool is needed" >&2; exit 1; }
done
# shellcheck source=bench/demo_projects.sh
. bench/demo_projects.sh

work=$(mktemp -d "${TMPDIR:-/tmp}/rbuilder-scale.XXXXXX")
control_plane='' manager='' poller=''
stop() { # PID: SIGTERM, then wait for it
  kill "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}
logs=$repo/target/scale-logs
cleanup() {
  for pid in "$poller" "$manager" "$control_plane"; do [ -z "$pid" ] || stop "$pid"; done
  wait # perf, if profiling
  local data
  for data in "$work"/*/perf-*.data; do
    [ -e "$data" ] || continue
    perf report --quiet --no-children --percent-limit 0.3 -g none -i "$data" 2>/dev/null |
      head -n 60 >"${data%.data}-report.txt" || true
  done
  # The managers' logs, the control planes' and the figures of each run, kept for a look; the
  # rest goes (the projects, etcd's data).
  rm -rf "$logs"
  mkdir -p "$logs"
  (cd "$work" && find . -maxdepth 3 \( -name '*.log' -o -name '*.txt' -o -name '*.json' -o -name '*.out' -o -name '*.data' \) \
    -exec cp --parents {} "$logs/" \;) 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM # run the EXIT trap on Ctrl-C and kill too

say() { echo "scale: $*" >&2; }
load() { cut -d ' ' -f 1-3 /proc/loadavg; }
now_ns() { date +%s%N; }
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
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
load_py() { python3 -B bench/scale_load.py "$@"; } # -B: no __pycache__ left in bench/
load_start=$(load)
started_at=$(date -u '+%Y-%m-%d %H:%M UTC')

# --- The tools and the two projects -------------------------------------------------------------
say "building rbuilder; kubebuilder, the control plane's binaries and KWOK if needed"
run "$work/rbuilder-build.log" cargo build --locked --bin rbuilder
rbuilder=$repo/target/debug/rbuilder
kubebuilder=$("$repo/scripts/kubebuilder")
assets=$("$repo/scripts/envtest-assets")
"$repo/scripts/kwok" >/dev/null
export PATH=$assets:$PATH # kubectl of the API server's version
kubebuilder_version=$("$kubebuilder" version | awk '/KubeBuilder:/ { print $2 }')

say "scaffolding both operators"
rust_project=$work/rust/demo-microservice go_project=$work/go/demo-microservice
# In subshells: each scaffold function changes to its project's folder.
(run "$work/scaffold-rust.log" scaffold_rust "$rust_project")
(run "$work/scaffold-go.log" scaffold_go "$go_project")
port_name_fix=$(fix_go_port_name "$go_project")

# Reconcile concurrency in rbuilder's controller: the constant, changed or added.
rust_controller=$rust_project/src/controller/demo_micro_service.rs
# The first one in the runtime's controller.rs is the trait's default; its tests have others.
default_of() { sed -n 's/^ *const MAX_CONCURRENT_RECONCILES: u16 = \([0-9]*\);/\1/p' "$1" | head -n 1; }
rust_default=$(default_of "$rust_controller")
rust_default=${rust_default:-$(default_of "$rust_project/runtime/core/src/controller.rs")}
if grep -q 'const MAX_CONCURRENT_RECONCILES' "$rust_controller"; then
  sed -i "s/const MAX_CONCURRENT_RECONCILES: u16 = [0-9]*;/const MAX_CONCURRENT_RECONCILES: u16 = $concurrency;/" "$rust_controller"
else
  perl -0pi -e "s/(\n    const FINALIZER: [^\n]*\n)/\$1    const MAX_CONCURRENT_RECONCILES: u16 = $concurrency;\n/" "$rust_controller"
fi
grep -q "const MAX_CONCURRENT_RECONCILES: u16 = $concurrency;" "$rust_controller" || {
  echo "error: cannot set the reconcile concurrency in $rust_controller" >&2
  exit 1
}

# kubebuilder's manager: the concurrency and the cache, in the manager's options.
go_main=$go_project/cmd/main.go
python3 - "$go_main" "$concurrency" <<'PY'
import re, sys
path, concurrency = sys.argv[1], sys.argv[2]
code = open(path).read()
options = "ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{\n"
assert options in code, f"{path} no longer creates its manager with {options!r}"
code = code.replace(options, options + f"""\
		// bench/scale.sh: configured as the Rust manager runs.
		Controller: benchconfig.Controller{{MaxConcurrentReconciles: {concurrency}}},
		Cache: benchcache.Options{{DefaultTransform: benchcache.TransformStripManagedFields()}},
""", 1)
imports = """import (
	benchcache "sigs.k8s.io/controller-runtime/pkg/cache"
	benchconfig "sigs.k8s.io/controller-runtime/pkg/config"
"""
code = re.sub(r"^import \(\n", imports, code, count=1, flags=re.M)
open(path, "w").write(code)
PY

say "building both managers (release; Go as its Dockerfile builds)"
# With the Cargo.lock rbuilder wrote into the project (the tested crates).
rust_target=$repo/target rust_build_env=()
if [ -n "$profile" ]; then
  command -v perf >/dev/null || { echo "error: SCALE_PROFILE needs perf" >&2; exit 1; }
  # A target folder of its own: these settings change every crate's build.
  rust_target=$repo/target/profiling
  rust_build_env=(CARGO_PROFILE_RELEASE_STRIP=none CARGO_PROFILE_RELEASE_DEBUG=line-tables-only
    RUSTFLAGS="-C force-frame-pointers=yes")
fi
(cd "$rust_project" && CARGO_TARGET_DIR=$rust_target \
  run "$work/build-rust.log" env "${rust_build_env[@]}" cargo build --release --locked --bin demo-microservice)
cp "$rust_target/release/demo-microservice" "$work/rust-manager"
if [[ " $operators " == *" go "* ]]; then
  (cd "$go_project" && run "$work/build-go.log" env CGO_ENABLED=0 go build -o "$work/go-manager" ./cmd/main.go)
fi

# --- Running ------------------------------------------------------------------------------------
kib() { awk -v key="$1:" '$1 == key { print $2 }' "/proc/$manager/status"; }
cpu_ms() { # utime + stime, fields 14 and 15 (the command name in field 2 has no spaces)
  awk -v hz="$(getconf CLK_TCK)" '{ print int(($14 + $15) * 1000 / hz) }' "/proc/$manager/stat"
}

# start_manager NAME DIR: starts NAME's manager ($manager) on the ports $probe_port and
# $metrics_port. As deployed, kubebuilder's takes its operand's image from the environment;
# --zap-devel=false: info level, as rbuilder's; --kube-api-qps=0: no client-side limit, as
# kubebuilder's (see the top).
start_manager() {
  local name=$1 dir=$2 flags=(--kube-api-qps=0)
  [ "$name" = go ] && flags=(--zap-devel=false)
  env DEMOMICROSERVICE_IMAGE="$demo_image" "$work/$name-manager" "${flags[@]}" \
    --health-probe-bind-address="127.0.0.1:$probe_port" \
    --metrics-bind-address="127.0.0.1:$metrics_port" --metrics-secure=false \
    >>"$dir/$name-manager.log" 2>&1 &
  manager=$!
  # Attached, so that $manager stays the manager's process (its figures); perf ends with it.
  if [ "$name" = rust ] && [ -n "$profile" ]; then
    perf record --quiet -F 499 -g -p "$manager" -o "$dir/perf-$(date +%s).data" 2>>"$dir/perf.log" &
  fi
}
wait_ready() { # NAME DIR
  for _ in $(seq 1 600); do
    curl --silent --fail "http://127.0.0.1:$probe_port/readyz" >/dev/null 2>&1 && return
    kill -0 "$manager" 2>/dev/null || break
    sleep 0.1
  done
  echo "error: the $1 manager did not get ready; its log:" >&2
  tail -n 30 "$2/$1-manager.log" >&2
  exit 1
}
# writes_now DIR: the operator's writes so far (see scale_load.py delta), events left out.
writes_now() {
  load_py requests "$KUBECONFIG" >"$1/now.json"
  load_py delta "$1/start.json" "$1/now.json" | awk '$1 == "writes" { print $2 }'
}
# quiet DIR: waits until the operator's writes have not changed for 3 s (at most 120 s).
quiet() {
  local last='' now same=0
  for _ in $(seq 1 120); do
    now=$(writes_now "$1")
    if [ "$now" = "$last" ]; then
      same=$((same + 1))
      [ "$same" -ge 3 ] && return
    else
      same=0
    fi
    last=$now
    sleep 1
  done
  say "the operator's writes did not stop within 120 s: counted until now"
}
# reconciles_now: the reconciles the manager has finished, whatever their result (its /metrics:
# controller_runtime_reconcile_total, the same series in both).
reconciles_now() {
  curl --silent --fail "http://127.0.0.1:$metrics_port/metrics" |
    awk '/^controller_runtime_reconcile_total[{]/ { sum += $NF } END { print sum + 0 }'
}
# figure FILE NAME: the value of "NAME value" in FILE.
figure() { awk -v key="$2" '$1 == key { print $2 }' "$1"; }

# measure NAME RUN CRD_DIR SPEC: one run of one operator on a control plane of its own; its
# figures in $work/NAME-RUN/figures.txt.
measure() {
  local name=$1 dir=$work/$1-$2 crds=$3 spec=$4 t0
  mkdir -p "$dir"
  say "$name, run $2: control plane with $nodes simulated nodes"
  KUBEBUILDER_ASSETS=$assets CONTROL_PLANE_NODES=$nodes CONTROL_PLANE_NODE_PODS=$node_pods \
    scripts/control-plane "$dir/control-plane" &
  control_plane=$!
  for _ in $(seq 1 1800); do
    [ -e "$dir/control-plane/ready" ] && break
    kill -0 "$control_plane" 2>/dev/null || { echo "error: the control plane did not start" >&2; exit 1; }
    sleep 0.1
  done
  export KUBECONFIG=$dir/control-plane/kubeconfig
  kubectl apply --server-side -f "$crds" >/dev/null
  kubectl wait --for condition=Established crd/demomicroservices.devops.my.domain >/dev/null
  # Pods need the namespace's ServiceAccount, which kube-controller-manager creates at its start.
  for _ in $(seq 1 100); do
    kubectl get serviceaccount default >/dev/null 2>&1 && break
    sleep 0.1
  done

  probe_port=$(free_port) metrics_port=$(free_port)
  start_manager "$name" "$dir"
  wait_ready "$name" "$dir"
  load_py requests "$KUBECONFIG" >"$dir/start.json"
  say "$name, run $2: $objects DemoMicroServices"
  t0=$(date +%s)
  local rate_flag=()
  [ "$rate" = 0 ] || rate_flag=(--rate "$rate")
  load_py create "$KUBECONFIG" "$objects" --spec "$spec" --results "$dir/load.txt" \
    --time-limit "$time_limit" "${rate_flag[@]}" || {
    echo "error: the load failed; the $name manager's log (last lines):" >&2
    tail -n 30 "$dir/$name-manager.log" >&2
    exit 1
  }
  local wait_until=$((t0 + ${settle%.*} + $(figure "$dir/load.txt" creates | cut -d . -f 1)))
  while [ "$(date +%s)" -lt "$wait_until" ]; do sleep 1; done
  quiet "$dir"
  {
    cat "$dir/load.txt"
    echo "peak_rss $(kib VmHWM)"
    echo "cpu $(cpu_ms)"
    echo "reconciles $(reconciles_now)"
    load_py events "$KUBECONFIG" | sed 's/^/created_/'
  } >"$dir/figures.txt"
  load_py requests "$KUBECONFIG" >"$dir/created.json"
  local events
  events=$(figure "$dir/figures.txt" created_occurrences)
  load_py delta "$dir/start.json" "$dir/created.json" --creates "$objects" --events "$events" \
    | sed 's/^/created_/' >>"$dir/figures.txt"

  say "$name, run $2: restart with $objects settled objects"
  stop "$manager"
  manager=''
  cp "$dir/created.json" "$dir/start.json" # quiet and writes_now count from here
  probe_port=$(free_port) metrics_port=$(free_port)
  rm -f "$dir/started"
  python3 -B bench/scale_load.py restart "http://127.0.0.1:$probe_port/readyz" \
    "http://127.0.0.1:$metrics_port/metrics" "$dir/started" "$objects" >"$dir/restart.out" &
  poller=$!
  until [ -e "$dir/started" ]; do sleep 0.01; done
  t0=$(now_ns)
  start_manager "$name" "$dir"
  wait "$poller" || {
    echo "error: the restarted $name manager did not reconcile every object; its log:" >&2
    tail -n 30 "$dir/$name-manager.log" >&2
    exit 1
  }
  poller=''
  local point
  for point in ready first all; do
    echo "restart_$point $((($(figure "$dir/restart.out" "$point") - t0) / 1000000))"
  done >>"$dir/figures.txt"
  quiet "$dir"
  load_py events "$KUBECONFIG" >"$dir/restart-events.txt"
  load_py requests "$KUBECONFIG" >"$dir/restarted.json"
  local new_events=$(($(figure "$dir/restart-events.txt" occurrences) - $(figure "$dir/figures.txt" created_occurrences)))
  load_py delta "$dir/created.json" "$dir/restarted.json" --events "$new_events" \
    | sed 's/^/restart_/' >>"$dir/figures.txt"
  stop "$manager"
  manager=''
  stop "$control_plane"
  control_plane=''
  rm -rf "$dir/control-plane/etcd"
}

for i in $(seq "$runs"); do
  for name in $operators; do
    case $name in
    rust) measure rust "$i" "$rust_project/config/crd/bases" "$demo_spec_rust" ;;
    go) measure go "$i" "$go_project/config/crd/bases" "$demo_spec_go" ;;
    *) echo "error: SCALE_OPERATORS lists $name: rust or go" >&2 && exit 1 ;;
    esac
  done
done
apiserver=$("$assets/kube-apiserver" --version | awk '{ print $2 }')

# --- The table ----------------------------------------------------------------------------------
# median NAME KEY: the median over the runs of NAME's figure KEY.
median() {
  local i
  for i in $(seq "$runs"); do
    if [ -e "$work/$1-$i/figures.txt" ]; then figure "$work/$1-$i/figures.txt" "$2"; fi
  done | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}
# all NAME KEY: each run's figure, for the notes.
all() {
  local i
  for i in $(seq "$runs"); do
    if [ -e "$work/$1-$i/figures.txt" ]; then figure "$work/$1-$i/figures.txt" "$2"; fi
  done | paste -sd ' '
}
# row LABEL KEY UNIT [PER]: UNIT is ms, s, kib-mib, cpu (ms to s), count, per (KEY / objects).
row() {
  local rust go
  rust=$(median rust "$2") go=$(median go "$2")
  awk -v label="$1" -v rust="$rust" -v go="$go" -v unit="$3" -v n="$objects" '
    function show(v) {
      if (v == "") return "–"
      if (unit == "ms") return sprintf("%.0f ms", v)
      if (unit == "s") return sprintf("%.1f s", v)
      if (unit == "kib-mib") return sprintf("%.1f MiB", v / 1024)
      if (unit == "cpu") return sprintf("%.1f s", v / 1000)
      if (unit == "per") return sprintf("%.2f", v / n)
      return sprintf("%d", v)
    }
    BEGIN {
      ratio = (rust == "" || go == "" || go == 0) ? "–" : sprintf("%.2f", rust / go)
      printf "| %s | %s | %s | %s |\n", label, show(rust), show(go), ratio
    }'
}
echo
echo "== bench/scale.sh, $started_at: rbuilder ($(git rev-parse --short HEAD)) against kubebuilder $kubebuilder_version, kube-apiserver $apiserver, KWOK $(awk '$1 == "sigs.k8s.io/kwok" { print $2 }' tools/kwok/go.mod)"
echo "   SCALE_OBJECTS=$objects RUNS=$runs SCALE_CONCURRENCY=$concurrency SCALE_RATE=$rate SCALE_SETTLE=$settle; $nodes nodes of $node_pods Pods; $(nproc) cores; load average at the start $load_start, at the end $(load)"
echo
echo "| Figure (median of $runs runs, $objects objects) | rbuilder (Rust) | kubebuilder (Go) | Rust/Go |"
echo "|---|---|---|---|"
row "first create -> all Deployments Available" available s
row "  (the creates alone)" creates s
row "create -> Deployment p50" p50 ms
row "create -> Deployment p95" p95 ms
row "create -> Deployment p99" p99 ms
row "peak RSS (VmHWM)" peak_rss kib-mib
row "CPU seconds (user + system), start to settled" cpu cpu
row "reconciles per object, start to settled" reconciles per
row "reads per object (GET, LIST)" created_reads per
row "writes per object" created_writes per
row "  DemoMicroService (finalizer, spec)" created_writes_dms per
row "  its status" created_writes_status per
row "  Deployment" created_writes_deployments per
row "  Events" created_writes_events per
row "restart: start -> /readyz 200" restart_ready ms
row "restart: start -> first reconcile" restart_first ms
row "restart: start -> every object reconciled" restart_all ms
row "restart: writes (settled objects)" restart_writes count
row "restart: reads" restart_reads count
echo
echo "| Setting | both ran with | rbuilder's default | kubebuilder's default |"
echo "|---|---|---|---|"
echo "| reconcile concurrency | $concurrency | ${rust_default:-?} (0: no limit) | 1 |"
echo "| log level | info | info | debug (zap development mode, stack traces from warnings) |"
echo "| cache | DemoMicroServices and Deployments (only the operator's exist), no managedFields | the same; Deployments: only those labelled as its own | every Deployment of the cluster, with managedFields |"
echo "| client-side rate limit | none | none (--kube-api-qps 0; 20/s after a burst of 30 before 2026-12-06) | none |"
echo
echo "Each run's figures, in run order (Rust, then Go):"
for key in available p95 peak_rss cpu created_writes restart_writes; do
  echo "- $key: Rust $(all rust "$key"); Go $(all go "$key")"
done
if [ -n "$port_name_fix" ]; then
  echo "kubebuilder's controller edited once: its container port name cut to 15 characters (\"demomicroservic\"); as generated, the API server refuses its Deployments."
fi
echo "Logs and each run's figures: ${logs#"$repo"/}/"
