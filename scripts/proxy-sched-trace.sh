#!/usr/bin/env bash
# Where the time of one call goes at concurrency 1, direct and through the
# proxy over stdio: the kernel's scheduler events (perf, sched_switch) for a
# whole `toolshape bench` run of the rmcp peer's get_weather_data, read into
# each process's time on a CPU per call, the time when none of them ran (the
# wake-ups), and how much of the run two of them spent on CPUs at once.
#
# What it shows on the project's 2-core machine: the processes of a call take
# turns (a request goes client → proxy → rmcp and the answer back, each
# waiting for the one before; two of them almost never run at once), so a
# call's time is the sum of their times on a CPU, kernel work included, and
# of the gaps when none runs (a process woken on an idle CPU). See
# docs/proxy.md, "Cost". perf's tracing slows every switch a little: the
# p50s here are above the untraced ones.
#
#   scripts/proxy-sched-trace.sh [CALLS]   (default 20000)
#   SKIP_BUILD=1 uses the binaries already built. Needs perf (Debian's
#   linux-perf, installed when missing) and the right to trace (root).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
work=$root/target/peers
calls=${1:-20000}
mkdir -p "$work"

if ! command -v perf >/dev/null; then
  echo "installing perf (Debian)..." >&2
  sudo_cmd=""; [ "$(id -u)" -ne 0 ] && sudo_cmd=sudo
  $sudo_cmd apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq linux-perf >/dev/null
fi

# shellcheck source=lib/proxy-bench-binaries.sh
source "$root/scripts/lib/proxy-bench-binaries.sh"

out=$work/proxy-sched
rm -rf "$out"; mkdir -p "$out"

# One bench run under `perf record` (every CPU); writes NAME.txt (the events,
# with each thread's process) and NAME.json (the bench's report).
traced_run() { # name command...
  local name=$1; shift
  echo "$name: $calls calls at concurrency 1 under perf..." >&2
  perf record -q -e sched:sched_switch -a -o "$out/$name.data" -- \
    "$bench" bench --json --quiet-server --calls "$calls" --concurrency 1 \
    --tool get_weather_data --args '{"location":"Paris"}' -- "$@" \
    > "$out/$name.json" 2>"$out/$name.stderr"
  perf script -i "$out/$name.data" -F comm,pid,tid,cpu,time,trace > "$out/$name.txt" 2>/dev/null
}

traced_run direct "$rmcp"
traced_run proxy "$bench" proxy --quiet-server -- "$rmcp"

python3 - "$out" "$calls" <<'PY'
import json, re, sys
from collections import defaultdict

out, calls = sys.argv[1], int(sys.argv[2])
switch = re.compile(r"\s*(.*?)\s+(\d+)/(\d+)\s+\[(\d+)\]\s+([\d.]+):\s+prev_comm=.*? prev_pid=(\d+) .* next_pid=(\d+)")

def report(name, labels):
    pid_of, comm_of = {}, {}
    events = []
    for line in open(f"{out}/{name}.txt"):
        m = switch.match(line)
        if not m:
            continue
        comm, pid, tid, cpu, t, prev, nxt = m.groups()
        pid, tid = int(pid), int(tid)
        pid_of[tid] = pid
        if tid == pid:
            comm_of[pid] = comm
        events.append((float(t), int(cpu), int(prev), int(nxt)))
    # The call's processes: rmcp by its name; the toolshape processes in the
    # order they started (pids rise): the bench (the client), then the proxy.
    shapes = sorted(p for p, c in comm_of.items() if c.startswith("toolshape"))
    role = {p: "rmcp" for p, c in comm_of.items() if c.startswith("mcp-peer")}
    role.update(zip(shapes, labels))
    running, busy, intervals = {}, defaultdict(float), []
    first = events[0][0] if events else 0.0
    last = events[-1][0] if events else 0.0
    for t, cpu, prev, nxt in events:
        if cpu in running:
            who, since = running.pop(cpu)
            if who:
                busy[who] += t - since
                intervals.append((since, t))
        running[cpu] = (role.get(pid_of.get(nxt)) if nxt else None, t)
    bench = json.load(open(f"{out}/{name}.json"))
    wall = 1e6 / bench["calls_per_second"]
    print(f"\n{name}: p50 {bench['p50_ms'] * 1000:.1f} µs, {wall:.1f} µs of wall time per call")
    for who in ("client", "proxy", "rmcp"):
        if who in busy:
            print(f"  {who:7s} on a CPU {busy[who] * 1e6 / calls:6.1f} µs per call")
    # Time one of the call's processes ran, two at once, and none.
    marks = sorted([(a, 1) for a, _ in intervals] + [(b, -1) for _, b in intervals])
    level, prev_t, one, two = 0, None, 0.0, 0.0
    for t, step in marks:
        if prev_t is not None and level > 0:
            one += t - prev_t
            two += (t - prev_t) if level > 1 else 0.0
        level += step
        prev_t = t
    none = max(last - first - one, 0.0)
    print(f"  any of them on a CPU {one * 1e6 / calls:6.1f} µs per call, two at once {two * 1e6 / calls:5.1f} µs, "
          f"none {none * 1e6 / calls:5.1f} µs (waking up; the run's start and end included)")
    return bench["p50_ms"] * 1000, busy.get("proxy", 0.0) * 1e6 / calls

direct, _ = report("direct", ["client"])
proxied, proxy_cpu = report("proxy", ["client", "proxy"])
print(f"\nthe proxy added {proxied - direct:.1f} µs to the p50 and spent {proxy_cpu:.1f} µs per call on a CPU")
PY
