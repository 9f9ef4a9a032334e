#!/usr/bin/env bash
# Prints how long leader election takes to hand the generated example operator over from one
# manager to another (examples/demo-microservice, release build, two instances started with
# --leader-elect), RUNS times each (default 5), with the median:
#   - after SIGTERM of the leader, which releases its Lease on the way out: the standby takes it
#     at its next attempt, within one retry period (2 s);
#   - after SIGKILL of the leader, which releases nothing: the standby takes the Lease once it
#     has not seen it change for the lease duration (15 s). It counts from the attempt at which
#     it saw the last renewal (0 to 2 s after it; the renewal came 0 to 2 s before the kill),
#     and tries every 2 s, so it takes the Lease 16 s after that attempt: 14 to 18 s after the
#     kill.
# Each figure runs from just before the signal to the time stamp of the standby's "became the
# leader" log line (both read from this machine's clock). The two managers start together, so
# their 2 s cycles are in step; the signal comes at a random point of the cycle (3 to 5 s after
# the election), as instances started apart would see it, not always just after an attempt.
# Then it checks, once, that a leader whose Lease another holder took (written with kubectl
# patch) logs "lost the leader-election Lease", exits non-zero, and never writes the Lease
# again: a watch on the Lease sees no version holding its identity, and no release, after the
# takeover. Nothing else is asserted.
#
# It runs against the control plane of the end-to-end tests (scripts/control-plane: etcd,
# kube-apiserver and kube-controller-manager on this machine): requests take milliseconds, so
# the figures are the election's own timing. Not measured: a leader cut off from the API server (it steps down at its 10 s renew deadline; the
# runtime's unit tests cover that), the time to start reconciling after taking the Lease (the
# watches' initial lists), clock skew between instances (the expiry counts on the standby's
# own clock anyway).
# Needs python3, openssl and the binaries of scripts/envtest-assets (kubectl comes with them).
# Takes about three minutes plus the release build (shared with the tests in target/).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
runs=${RUNS:-5}
lease=demo-microservice-leader-election # "<operator name>-leader-election", in POD_NAMESPACE

work=$(mktemp -d)
control_plane='' watcher=''
managers=() # the managers started and not yet waited for: cleanup kills them
cleanup() {
  if [ -n "$watcher" ]; then kill "$watcher" 2>/dev/null || true; fi
  for pid in "${managers[@]}"; do
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true # 2>/dev/null: no "Killed" line from bash
  done
  if [ -n "$control_plane" ]; then
    kill "$control_plane" 2>/dev/null || true
    wait "$control_plane" 2>/dev/null || true
  fi
  rm -rf "$work" # the kubeconfig, etcd's data and the logs with it
}
trap cleanup EXIT
trap 'exit 130' INT TERM # run the EXIT trap on Ctrl-C and kill too

# Build a copy, as operator.sh does; only the manager binary is needed.
cp -r examples/demo-microservice "$work/demo-microservice"
(cd "$work/demo-microservice" &&
  CARGO_TARGET_DIR=$repo/target cargo build --release --locked --quiet --bin demo-microservice)
cp "$repo/target/release/demo-microservice" "$work/manager"

assets=$("$repo/scripts/envtest-assets")
export PATH=$assets:$PATH # kubectl of the API server's version
KUBEBUILDER_ASSETS=$assets "$repo/scripts/control-plane" "$work/control-plane" &
control_plane=$!
for _ in $(seq 1 1200); do
  [ -e "$work/control-plane/ready" ] && break
  kill -0 "$control_plane" 2>/dev/null || { echo "error: the control plane did not start" >&2; exit 1; }
  sleep 0.1
done
export KUBECONFIG=$work/control-plane/kubeconfig
kubectl apply --server-side -f "$work/demo-microservice/config/crd/bases/" >/dev/null
# The manager's controller would wait for it, 2 minutes at most; better to start with it.
kubectl wait --for condition=Established crd/demomicroservices.devops.my.domain >/dev/null

# start NAME: a manager with --leader-elect and HOSTNAME=NAME (its identity is NAME_<uuid>), its log
# in $work/NAME.log, on free ports; its PID in $started.
start() {
  HOSTNAME=$1 POD_NAMESPACE=default "$work/manager" --leader-elect \
    --metrics-bind-address 127.0.0.1:0 --health-probe-bind-address 127.0.0.1:0 \
    --webhook-bind-address 127.0.0.1:0 \
    2>"$work/$1.log" &
  started=$!
  managers+=("$started")
}

# signal SIGNAL PID: sends it and waits for the manager to exit; its exit status in $status.
signal() {
  kill -s "$1" "$2" 2>/dev/null || true # it may have exited already (bash keeps its status)
  if wait "$2" 2>/dev/null; then status=0; else status=$?; fi
  local pid rest=()
  for pid in "${managers[@]}"; do [ "$pid" = "$2" ] || rest+=("$pid"); done
  managers=("${rest[@]}")
}

leads() { grep -q 'became the leader' "$work/$1.log"; }

# await_leader NAME...: waits (60 s at most) until one of them logs that it became the leader;
# prints its name.
await_leader() {
  for _ in $(seq 1 1200); do
    for name in "$@"; do
      if leads "$name"; then echo "$name"; return 0; fi
    done
    sleep 0.05
  done
  echo "error: none of $* became the leader within 60 s; their logs:" >&2
  for name in "$@"; do tail -5 "$work/$name.log" >&2; done
  return 1
}

# The time stamp of NAME's "became the leader" line (the log's first field, RFC 3339, UTC), in
# seconds since the epoch.
leader_since() { date -d "$(awk '/became the leader/ { print $1; exit }' "$work/$1.log")" +%s.%N; }

# pair NAME: starts NAME-a and NAME-b and waits until one leads. Sets $leader and $standby (names)
# and $leader_pid and $standby_pid.
pair() {
  local a b
  start "$1-a"
  a=$started
  start "$1-b"
  b=$started
  leader=$(await_leader "$1-a" "$1-b")
  if [ "$leader" = "$1-a" ]; then
    standby=$1-b leader_pid=$a standby_pid=$b
  else
    standby=$1-a leader_pid=$b standby_pid=$a
  fi
  if leads "$standby"; then echo "error: two leaders at once: $leader and $standby" >&2; exit 1; fi
}

# handover SIGNAL RUN: sends SIGNAL to the leader of a new pair, and sets $took to the seconds
# until the other became the leader. Then stops that one with SIGTERM, which releases the Lease
# for the next run.
handover() {
  local sent
  pair "$1-$2"
  sleep "$(awk -v r="$RANDOM" 'BEGIN { printf "%.2f", 3 + 2 * r / 32768 }')"
  sent=$(date +%s.%N)
  signal "$1" "$leader_pid"
  await_leader "$standby" >/dev/null
  took=$(awk -v from="$sent" -v to="$(leader_since "$standby")" 'BEGIN { printf "%.2f", to - from }')
  signal TERM "$standby_pid"
}

median() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
row() { printf '%-27s%14s   %s\n' "$@"; }

echo "== demo-microservice (release), two managers with --leader-elect, against kube-apiserver (scripts/control-plane): $runs handovers each"
for signal in TERM KILL; do
  times=()
  for run in $(seq 1 "$runs"); do
    handover "$signal" "$run"
    times+=("$took")
  done
  case $signal in
    TERM) why="the leader releases the Lease; expected within one retry period (2 s)" ;;
    KILL) why="no release: the 15 s lease duration passes first; expected 14 to 18 s" ;;
  esac
  row "SIG$signal -> new leader:" "$(median "${times[@]}") s" "median of $runs (${times[*]}); $why"
done

# A leader that loses its Lease: another holder takes it with kubectl while a standby waits.
pair lost
# One line per version of the Lease from now on: resourceVersion and holder.
kubectl get lease "$lease" --namespace default --watch \
  -o jsonpath='{.metadata.resourceVersion} {.spec.holderIdentity}{"\n"}' >"$work/lease.watch" &
watcher=$!
for _ in $(seq 1 100); do [ -s "$work/lease.watch" ] && break; sleep 0.05; done
kubectl patch lease "$lease" --namespace default --type merge \
  -p '{"spec": {"holderIdentity": "intruder"}}' >/dev/null
# The leader sees it at its next renewal (2 s at most) and exits by itself.
for _ in $(seq 1 200); do kill -0 "$leader_pid" 2>/dev/null || break; sleep 0.05; done
signal KILL "$leader_pid" # reaps it; kills it only if it is still running after 10 s
lost_status=$status
await_leader "$standby" >/dev/null # about 15 s: the intruder's Lease must expire first
sleep 1                            # for the watch to show the standby's write
kill "$watcher"
wait "$watcher" || true
watcher=''
signal TERM "$standby_pid"

failures=()
[ "$lost_status" -ne 0 ] && [ "$lost_status" -ne 137 ] ||
  failures+=("the leader exited with status $lost_status (137: it did not exit by itself)")
grep -q 'lost the leader-election Lease' "$work/$leader.log" ||
  failures+=("the leader did not log \"lost the leader-election Lease\"")
# The holders from the intruder's version on: the intruder, then the standby. The old leader's
# identity, or a release (no holder), in between would be a write by the leader that lost.
holders=$(awk '$2 == "intruder" { seen = 1 } seen { print ($2 == "" ? "(none)" : $2) }' "$work/lease.watch" | uniq | tr '\n' ' ')
[[ $holders =~ ^intruder\ ${standby}_[0-9a-f-]{36}\ $ ]] ||
  failures+=("holders of the Lease after the takeover: $holders(expected intruder, then ${standby}_<uuid>)")
if [ ${#failures[@]} -eq 0 ]; then
  row "lost Lease:" "ok" "the leader logged it and exited with status $lost_status; no write by it after kubectl took the Lease"
else
  printf 'lost Lease: FAILED: %s\n' "${failures[@]}" >&2
  echo "the leader's log (last lines):" >&2
  tail -5 "$work/$leader.log" >&2
  exit 1
fi
