#!/usr/bin/env bash
# loadtest/external.sh: the bridge measured from outside, as a load balancer
# sees it. Builds this checkout (and, with --base REV, a build of REV beside
# it), starts the standalone emulator (platform-sim) and each build's
# `ssobridge serve` as processes of their own on 127.0.0.1, and drives them
# with `ssobridge-bench --target` (this checkout's load tool for both), the
# builds taking turns for --rounds rounds. Prints each run's figures and,
# per build, the median of its rounds. See docs/performance.md.
#
#   loadtest/external.sh [--base REV] [--store sqlite|postgres] [--dsn URL]
#                        [--latency D] [--concurrency C] [--duration Ns]
#                        [--accounts N] [--rounds N] [--wrk] [--floor]
#   loadtest/external.sh --year [--minutes N] [--retention] [--store ...] [--dsn URL]
#
# --year compares a store that has served a year (ssobridge-bench fill:
# 10 million audit events over 89 days, 100,000 accounts with links,
# 500,000 sessions) with an empty one, in the same run: each bridge gets
# the run's signed-in sessions replayed by wrk for --minutes one-minute runs
# (the cookies grow older than a minute, as a script's or a kiosk's do),
# with each minute's rate, p99 and the session writes per session a minute
# (ssobridge_session_touches_total). --retention then starts the year's
# bridge again with audit.retention 720h: its start-up pass deletes the 6.6
# million events older than 30 days (20 fresh ones among the oldest: rows
# whose time runs ahead of their id) while wrk drives it, minute by
# minute, until the pass is done. FILL_ARGS
# (e.g. "--events 100000") changes the year's size, for a quick try.
#
# --store postgres needs --dsn (and psql, to make and drop a schema per
# build). --wrk also drives each build with wrk (Debian package wrk) for
# the same duration, from a script the load tool writes. --floor (needs
# wrk) also drives loadtest/floor, a bare net/http server that only makes
# the platform call, in each round: the lowest bridge/emulator CPU ratio a
# launch can have here. Bounded: every run lasts --duration; everything
# listens on 127.0.0.1 and is stopped at exit.
set -euo pipefail

base_rev="" store=sqlite dsn="" latency=0s concurrency=64 duration=8s accounts=200 rounds=3 use_wrk=0 use_floor=0
year=0 minutes=4 retention=0
while [ $# -gt 0 ]; do
  case "$1" in
    --base) base_rev=$2; shift 2 ;;
    --store) store=$2; shift 2 ;;
    --dsn) dsn=$2; shift 2 ;;
    --latency) latency=$2; shift 2 ;;
    --concurrency) concurrency=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --accounts) accounts=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --wrk) use_wrk=1; shift ;;
    --floor) use_floor=1; shift ;;
    --year) year=1; shift ;;
    --minutes) minutes=$2; shift 2 ;;
    --retention) retention=1; shift ;;
    -h|--help) sed -n '2,36p' "$0"; exit 0 ;;
    *) echo "external.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
case "$store" in
  sqlite) ;;
  postgres) [ -n "$dsn" ] || { echo "external.sh: --store postgres needs --dsn postgres://..." >&2; exit 2; }
            command -v psql >/dev/null || { echo "external.sh: --store postgres needs psql" >&2; exit 2; } ;;
  *) echo "external.sh: --store must be sqlite or postgres" >&2; exit 2 ;;
esac
[[ "$rounds" =~ ^[1-9][0-9]?$ ]] || { echo "external.sh: --rounds must be 1..99" >&2; exit 2; }
# Whole seconds: wrk's CPU per launch divides by them (a "1m" or "500ms"
# would give a figure wrong by its unit).
[[ "$duration" =~ ^[1-9][0-9]{0,2}s$ ]] || { echo "external.sh: --duration must be whole seconds, 1s..999s (e.g. 8s)" >&2; exit 2; }
[[ "$minutes" =~ ^[1-9][0-9]?$ ]] || { echo "external.sh: --minutes must be 1..99" >&2; exit 2; }
if [ "$year" = 1 ] && [ -n "$base_rev$use_floor" ] && [ "$base_rev$use_floor" != 0 ]; then
  echo "external.sh: --year compares two stores on this checkout: no --base or --floor with it" >&2; exit 2
fi
if [ "$retention" = 1 ] && [ "$year" = 0 ]; then
  echo "external.sh: --retention is for --year" >&2; exit 2
fi
if [ "$retention" = 1 ]; then
  # A few rows whose time runs ahead of their id, among the oldest: the
  # pass must delete every expired row around them.
  fresh_first="--fresh-first 20"
fi
if [ "$use_wrk$use_floor$year" != 000 ] && ! command -v wrk >/dev/null; then
  echo "external.sh: --wrk, --floor and --year need wrk (apt-get update && apt-get install -y wrk)" >&2; exit 2
fi

repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/ssobridge-external.XXXXXX)
pids=()
schemas=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  # Bounded: a process still there after 10 s is killed outright.
  for _ in $(seq 100); do
    alive=0
    for p in "${pids[@]}"; do
      st=$(ps -o stat= -p "$p" 2>/dev/null) || continue
      [[ "$st" == Z* ]] || alive=1 # an exited child stays a zombie until wait
    done
    [ "$alive" = 0 ] && break
    sleep 0.1
  done
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  for s in "${schemas[@]}"; do psql "$dsn" -q -c "DROP SCHEMA IF EXISTS $s CASCADE" >/dev/null 2>&1 || true; done
  [ -n "$base_rev" ] && git -C "$repo" worktree remove --force "$work/base-src" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
wait_up() { for _ in $(seq 100); do curl -fsS -o /dev/null "$1" 2>/dev/null && return 0; sleep 0.1; done; echo "external.sh: $1 did not come up" >&2; return 1; }

echo "building this checkout ($(git -C "$repo" rev-parse --short HEAD)$(git -C "$repo" diff --quiet || echo ', with uncommitted changes'))"
(cd "$repo" && go build -o "$work/new/ssobridge" . && go build -o "$work/ssobridge-bench" ./cmd/ssobridge-bench)
builds=(new)
if [ "$year" = 1 ]; then
  # Two bridges of this checkout: one on an empty store, one on a year's.
  mkdir -p "$work/empty" "$work/year"
  ln -s "$work/new/ssobridge" "$work/empty/ssobridge"
  ln -s "$work/new/ssobridge" "$work/year/ssobridge"
  builds=(empty year)
elif [ -n "$base_rev" ]; then
  echo "building $base_rev"
  git -C "$repo" worktree add --detach "$work/base-src" "$base_rev" >/dev/null
  (cd "$work/base-src" && go build -o "$work/base/ssobridge" .)
  builds=(base new)
fi
tool="$work/new/ssobridge"
bench="$work/ssobridge-bench" # this checkout's load tool drives both builds
if [ "$use_floor" = 1 ]; then
  (cd "$repo" && go build -o "$work/floor" ./loadtest/floor)
fi

key=bench-key secret=bench-secret-bench-secret-bench-secret
pport=$(free_port)
"$tool" platform-sim --addr "127.0.0.1:$pport" --api-key "$key" --api-secret "$secret" --latency "$latency" >/dev/null 2>&1 &
emu_pid=$!
pids+=($emu_pid)
wait_port() { for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.1; done; echo "external.sh: port $1 did not open" >&2; return 1; }
wait_port "$pport" # its API answers 401 unsigned: wait for the port

# wrk_run NAME PID URL SCRIPT ROUND: drives URL with wrk for --duration and
# prints a results line with PID's and the emulator's CPU per launch.
cpu_ticks() { awk '{print $14+$15}' "/proc/$1/stat"; } # utime + stime, in clock ticks
# db_ticks: the CPU ticks of every PostgreSQL process on this machine (0
# for SQLite, which works inside the bridge's own process). A backend that
# ends within the run takes its ticks with it; the bridge's pool keeps its own.
db_ticks() {
  local t=0 p
  if [ "$store" = postgres ]; then
    for p in $(pgrep -x postgres); do t=$((t + $(awk '{print $14+$15}' "/proc/$p/stat" 2>/dev/null || echo 0))); done
  fi
  echo "$t"
}
us_per_tick=$((1000000 / $(getconf CLK_TCK)))
wrk_run() {
  local name=$1 pid=$2 url=$3 script=$4 r=$5 before pbefore dbefore out after pafter dafter rps p50 p99 cpu pcpu dcpu failed
  before=$(cpu_ticks "$pid"); pbefore=$(cpu_ticks "$emu_pid"); dbefore=$(db_ticks)
  out=$(wrk -t2 -c"$concurrency" -d"$duration" --latency -s "$script" "$url")
  after=$(cpu_ticks "$pid"); pafter=$(cpu_ticks "$emu_pid"); dafter=$(db_ticks)
  rps=$(awk '/^Requests\/sec/ {print $2}' <<<"$out")
  toms='{v=$2; if (v ~ /us$/) v=v/1000; else if (v ~ /ms$/) v=v+0; else if (v ~ /s$/) v=v*1000; printf "%.2f", v}'
  p50=$(awk "\$1==\"50%\" $toms" <<<"$out"); p99=$(awk "\$1==\"99%\" $toms" <<<"$out")
  cpu=$(awk -v t="$((after - before))" -v u="$us_per_tick" -v r="$rps" -v d="${duration%s}" 'BEGIN {printf "%.1f", t*u/(r*d)}')
  pcpu=$(awk -v t="$((pafter - pbefore))" -v u="$us_per_tick" -v r="$rps" -v d="${duration%s}" 'BEGIN {printf "%.1f", t*u/(r*d)}')
  dcpu=$(awk -v t="$((dafter - dbefore))" -v u="$us_per_tick" -v r="$rps" -v d="${duration%s}" 'BEGIN {printf "%.1f", t*u/(r*d)}')
  failed=$(awk '/Non-2xx or 3xx responses/ {print $NF}' <<<"$out"); failed=${failed:-0}
  echo "round $r $name wrk launches_per_s=$rps p50_ms=$p50 p99_ms=$p99 bridge_cpu_us=$cpu platform_cpu_us=$pcpu cpu_ratio=$(awk -v a="$cpu" -v b="$pcpu" 'BEGIN {printf "%.2f", a/b}') not_3xx=$failed$([ "$store" = postgres ] && echo " db_cpu_us=$dcpu")" | tee -a "$work/results.txt"
  [ "$failed" = 0 ] || { echo "external.sh: $failed launches to $name under wrk were not answered 3xx" >&2; exit 1; }
}

# hold B URL CONFIG TAG: the load tool signs the run's accounts in on URL,
# launches each once and holds them for wrk; sets holder (its pid) and
# script (the wrk script).
hold() {
  local b=$1 url=$2 cfg=$3 tag=$4 out
  out="$work/$b/hold-$tag.txt" script="$work/$b/launch-$tag.lua"
  rm -f "$script"
  "$bench" --target "$url" --config "$cfg" --accounts "$accounts" --concurrency "$concurrency" --wrk-script "$script" >"$out" 2>&1 &
  holder=$!
  pids+=($holder)
  for _ in $(seq 1 600); do grep -q '^bench: holding the accounts' "$out" && break; sleep 0.1; done
  grep -q '^bench: holding the accounts' "$out" || { echo "external.sh: the wrk script was not written:"; cat "$out"; exit 1; }
}
touches() { curl -fsS "$1/metrics" | awk '$1=="ssobridge_session_touches_total" {print $2}'; }
serve_pid() { pgrep -f "$work/$1/ssobridge serve" | head -1; }

# year_runs: each store's bridge driven by wrk for --minutes one-minute
# runs, then (--retention) the pass over the year's expired events.
year_runs() {
  duration=60s
  echo "--year: $accounts sessions replayed by wrk over $concurrency connections, $minutes one-minute runs a store ($store)"
  for b in empty year; do
    local url t0 t1
    url=$(sed -n 's/^  addr: /http:\/\//p' "$work/$b/config.yaml")
    hold "$b" "$url" "$work/$b/config.yaml" run
    t0=$(touches "$url") s0=$(date +%s.%N)
    for m in $(seq "$minutes"); do wrk_run "$b" "$(serve_pid "$b")" "$url" "$script" "minute$m"; done
    t1=$(touches "$url") s1=$(date +%s.%N)
    # Per session and minute of the window the writes were counted in.
    echo "$b session_writes=$((t1 - t0)) window_s=$(awk -v a="$s0" -v b="$s1" 'BEGIN {printf "%.1f", b-a}') per_session_minute=$(awk -v w="$((t1 - t0))" -v s="$accounts" -v a="$s0" -v b="$s1" 'BEGIN {printf "%.3f", w/(s*(b-a)/60)}')" | tee -a "$work/results.txt"
    kill -TERM "$holder"; wait "$holder" || true
  done
  [ "$retention" = 1 ] && retention_run
  python3 - "$work/results.txt" <<'PY'
import re, statistics, sys
rate = {}
for line in open(sys.argv[1]):
    m = re.match(r"round minute(\d+) (\w+) wrk launches_per_s=([\d.]+) p50_ms=([\d.]+) p99_ms=([\d.]+) bridge_cpu_us=([\d.]+)", line)
    if m:
        rate.setdefault(m.group(2), []).append((int(m.group(1)), float(m.group(3)), float(m.group(5)), float(m.group(6))))
print("\nstore      first/min   last/min  last/first   median/min  median p99 ms  median bridge CPU us")
for b in ("empty", "year", "prune"):
    if b not in rate: continue
    r = sorted(rate[b])
    med = statistics.median(x[1] for x in r)
    print(f"{b:8} {r[0][1]:11.0f} {r[-1][1]:10.0f} {r[-1][1]/r[0][1]:11.2f} {med:12.0f} {statistics.median(x[2] for x in r):14.2f} {statistics.median(x[3] for x in r):20.1f}")
if "empty" in rate and "year" in rate:
    e, y = (statistics.median(x[1] for x in rate[k]) for k in ("empty", "year"))
    print(f"launches/s, year / empty: {y/e:.2f}x")
PY
}

# retention_run: the year's bridge starts again with audit.retention 720h;
# its start-up pass deletes the events older than 30 days while wrk drives
# it, minute by minute, until the pass is done.
retention_run() {
  local url cfg log m pid
  url=$(sed -n 's/^  addr: /http:\/\//p' "$work/year/config.yaml")
  cfg="$work/year/config.yaml"
  printf 'audit:\n  retention: 720h\n' >>"$cfg"
  pid=$(serve_pid year)
  kill -TERM "$pid"
  for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  log="$work/year/serve-retention.log"
  echo "--retention: the year's bridge starts again with audit.retention 720h and prunes while wrk drives it"
  "$work/year/ssobridge" serve --config "$cfg" >"$log" 2>&1 &
  pids+=($!)
  wait_up "$url/healthz"
  hold year "$url" "$cfg" prune
  for m in $(seq 1 6); do
    wrk_run prune "$(serve_pid year)" "$url" "$script" "minute$m"
    grep -q 'audit events pruned' "$log" && break
  done
  grep 'audit events pruned' "$log" | sed 's/^/pruner: /' | tee -a "$work/results.txt" || { echo "external.sh: the pass did not end within 6 minutes"; tail -5 "$log"; exit 1; }
  kill -TERM "$holder"; wait "$holder" || true
}

if [ "$use_floor" = 1 ]; then
  fport=$(free_port)
  "$work/floor" --addr "127.0.0.1:$fport" --platform "http://127.0.0.1:$pport" --api-key "$key" --api-secret "$secret" >"$work/floor.log" 2>&1 &
  floor_pid=$!
  pids+=($floor_pid)
  wait_port "$fport"
  printf 'wrk.method = "POST"\nwrk.body = "csrf_token=%s"\nwrk.headers["Content-Type"] = "application/x-www-form-urlencoded"\n' \
    "$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')" >"$work/floor.lua"
  echo "floor: http://127.0.0.1:$fport (loadtest/floor), log $work/floor.log"
fi

for b in "${builds[@]}"; do
  port=$(free_port)
  mkdir -p "$work/$b/data"
  if [ "$store" = postgres ]; then
    schema="bench_ext_${b}_$$"
    psql "$dsn" -q -c "DROP SCHEMA IF EXISTS $schema CASCADE; CREATE SCHEMA $schema" >/dev/null
    schemas+=("$schema")
    sep='?'; [[ "$dsn" == *\?* ]] && sep='&'
    storecfg="  driver: postgres
  dsn: \"$dsn${sep}search_path=$schema\""
  else
    storecfg="  dsn: $work/$b/data/ssobridge.db"
  fi
  # The defaults a partner runs (log level info, hashing as shipped), the
  # platform emulator, and keys of the run's own.
  cat >"$work/$b/config.yaml" <<EOF
server:
  addr: 127.0.0.1:$port
session:
  hash_key: $(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
  block_key: $(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
store:
$storecfg
platform:
  base_url: http://127.0.0.1:$pport
  api_key: $key
  api_secret: $secret
EOF
  if [ "$b" = year ]; then
    # shellcheck disable=SC2086 # FILL_ARGS is words for the fill command
    "$bench" fill --config "$work/$b/config.yaml" ${fresh_first:-} ${FILL_ARGS:-} | tee "$work/$b/fill.txt" | grep -E 'fill: (done|.* of .* \()' || { cat "$work/$b/fill.txt"; exit 1; }
  fi
  "$work/$b/ssobridge" serve --config "$work/$b/config.yaml" >"$work/$b/serve.log" 2>&1 &
  pids+=($!)
  wait_up "http://127.0.0.1:$port/healthz"
  echo "$b: http://127.0.0.1:$port ($store), log $work/$b/serve.log"
done

if [ "$year" = 1 ]; then
  year_runs
  exit 0
fi
echo "platform latency $latency, concurrency $concurrency, $accounts accounts, $duration a run, $rounds rounds"
for r in $(seq "$rounds"); do
  for b in "${builds[@]}"; do
    url=$(sed -n 's/^  addr: /http:\/\//p' "$work/$b/config.yaml")
    line=$("$bench" --target "$url" --config "$work/$b/config.yaml" --platform "http://127.0.0.1:$pport" \
      --accounts "$accounts" --concurrency "$concurrency" --duration "$duration" | tee "$work/$b/bench-$r.txt" | grep '^bench: launches_per_s=')
    echo "round $r $b ${line#bench: }" | tee -a "$work/results.txt"
    if [ "$use_wrk" = 1 ]; then
      # The bench holds its signed-in accounts until stopped, then removes them.
      hold "$b" "$url" "$work/$b/config.yaml" "round$r"
      wrk_run "$b" "$(serve_pid "$b")" "$url" "$script" "$r"
      kill -TERM "$holder"; wait "$holder" || true
    fi
  done
  if [ "$use_floor" = 1 ]; then
    wrk_run floor "$floor_pid" "http://127.0.0.1:$fport/launch" "$work/floor.lua" "$r"
  fi
done

# Medians of each build's rounds (the load tool's figures, and wrk's).
python3 - "$work/results.txt" <<'PY'
import re, statistics, sys
runs = {}
for line in open(sys.argv[1]):
    f = line.split()
    key = f[2] + (" (wrk)" if f[3] == "wrk" else "")
    kv = dict(re.findall(r"(\w+)=([-\d.]+)", line))
    runs.setdefault(key, []).append(kv)
cols = ["launches_per_s", "p50_ms", "p99_ms", "bridge_cpu_us", "platform_cpu_us", "cpu_ratio", "ratio_p99", "bridge_rss_mib"]
print("\nmedian of each build's rounds")
print("%-12s" % "build" + "".join("%17s" % c for c in cols))
med = {}
for key, kvs in runs.items():
    row = []
    for c in cols:
        vals = [float(kv[c]) for kv in kvs if c in kv]
        row.append(statistics.median(vals) if vals else None)
    med[key] = row
    print("%-12s" % key + "".join("%17s" % ("-" if v is None else f"{v:.2f}") for v in row))
for suffix in ("", " (wrk)"):
    if "new" + suffix in med and "base" + suffix in med:
        n, b = med["new" + suffix][0], med["base" + suffix][0]
        print(f"launches/s, new / base{suffix}: {n / b:.2f}x")
PY
