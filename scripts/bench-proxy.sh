#!/usr/bin/env bash
# What `toolshape proxy` costs, measured against a direct connection in the
# same run: the rmcp peer (peers/rmcp) called directly and through the proxy,
# over stdio (the proxy's stdio front, rmcp its child) and over Streamable
# HTTP (rmcp's own stateless HTTP server, against the proxy's stateless
# --http front with rmcp as its stdio child). Every call is validated by
# `toolshape bench` at the client end; through the proxy the input and the
# output are validated once more. Each path runs at concurrency 1 (latency:
# what one call costs) and at concurrency CONCURRENCY (throughput).
#
# Prints one table: calls/s, p50, p99, what the proxy adds to the direct
# p50, and the CPU time per call of the process the client talks to (read
# from /proc: for the proxy rows that is the proxy alone), and for the proxy
# rows the CPU per call of its rmcp child in the same run (sampled from
# /proc every 50 ms until it exits): what the proxy costs beside what the
# server itself spends serving the same calls.
#
#   scripts/bench-proxy.sh [CALLS] [CONCURRENCY]   (defaults: 20000 8)
#   SKIP_BUILD=1 uses the binaries already built.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
work=$root/target/peers
calls=${1:-20000}
concurrency=${2:-8}
tool=get_weather_data
tool_args='{"location":"Paris"}'
mkdir -p "$work"

if [ -z "${SKIP_BUILD:-}" ]; then
  echo "building toolshape and the rmcp peers (release)..." >&2
  cargo build --release --locked -q -p toolshape-cli
  bash scripts/setup-peers.sh rmcp >/dev/null
  cargo build --release --locked -q --manifest-path "$root/peers/rmcp/Cargo.toml" \
    --target-dir "$work/rmcp-target" --features http --bin mcp-peer-rmcp-http
fi
bench=$root/target/release/toolshape
rmcp=$work/rmcp-target/release/mcp-peer-rmcp
rmcp_http=$work/rmcp-target/release/mcp-peer-rmcp-http

# shellcheck source=lib/one-server.sh
source "$root/scripts/lib/one-server.sh"

# Follows the first child of the process whose pid is in (or will be written
# to) $1, writing its CPU ticks (user + system) to $2 until it exits.
watch_child() { # pidfile ticksfile
  local parent="" child="" ticks
  for _ in $(seq 1 400); do
    parent=$(cat "$1" 2>/dev/null || true)
    [ -n "$parent" ] && child=$(cat /proc/"$parent"/task/*/children 2>/dev/null | awk '{print $1; exit}')
    [ -n "$child" ] && break
    sleep 0.05
  done
  [ -n "$child" ] || return 0
  while ticks=$(awk '{print $14 + $15}' "/proc/$child/stat" 2>/dev/null); do
    echo "$ticks" > "$2"
    sleep 0.05
  done
}
hz=$(getconf CLK_TCK)
# The child's CPU per call, in µs, from the ticks file (empty when unknown).
child_cpu() { # ticksfile
  [ -s "$1" ] && python3 -c 'import sys; print(int(open(sys.argv[1]).read()) * 1e6 / int(sys.argv[2]) / int(sys.argv[3]))' "$1" "$hz" "$calls"
}

results=$work/proxy-results.jsonl
: > "$results"
status=0
record() { # name transport concurrency line [upstream CPU µs/call]
  if [ -n "$4" ]; then
    echo "{\"name\":\"$1\",\"transport\":\"$2\",\"concurrency\":$3,\"report\":$4,\"upstream_cpu\":${5:-null}}" >> "$results"
  else
    echo "{\"name\":\"$1\",\"transport\":\"$2\",\"concurrency\":$3,\"report\":null}" >> "$results"
    status=1
  fi
}

stdio_run() { # name concurrency command...
  local name=$1 conc=$2; shift 2
  echo "benchmarking $name over stdio, concurrency $conc..." >&2
  local pidfile=$work/proxy-bench.pid ticks=$work/proxy-bench.ticks watcher=""
  rm -f "$pidfile" "$ticks"
  if [ "$name" != rmcp ]; then
    watch_child "$pidfile" "$ticks" & watcher=$!
    set -- sh -c 'echo $$ > "$0"; exec "$@"' "$pidfile" "$@"
  fi
  local line=""
  line=$("$bench" bench --json --quiet-server --calls "$calls" --concurrency "$conc" \
    --tool "$tool" --args "$tool_args" -- "$@") || true
  [ -z "$watcher" ] || wait "$watcher" 2>/dev/null || true
  record "$name" stdio "$conc" "$line" "$(child_cpu "$ticks")"
}

http_run() { # name concurrency command... (ADDR is replaced by the address)
  local name=$1 conc=$2; shift 2
  local port; port=$(free_port)
  local argv=()
  for arg in "$@"; do argv+=("${arg//ADDR/127.0.0.1:$port}"); done
  "${argv[@]}" >/dev/null 2>"$work/proxy-bench-$name.stderr" &
  server_pid=$!
  if ! wait_port "$port" "$server_pid"; then
    echo "$name did not listen; its stderr:" >&2; cat "$work/proxy-bench-$name.stderr" >&2
    record "$name" http "$conc" ""; stop_server; return
  fi
  echo "benchmarking $name over HTTP, concurrency $conc..." >&2
  local pidfile=$work/proxy-bench.pid ticks=$work/proxy-bench.ticks watcher=""
  rm -f "$ticks"; echo "$server_pid" > "$pidfile"
  if [ "$name" != rmcp ]; then watch_child "$pidfile" "$ticks" & watcher=$!; fi
  local line=""
  line=$("$bench" bench --json --url "http://127.0.0.1:$port/mcp" --clients "$conc" \
    --concurrency "$conc" --calls "$calls" --tool "$tool" --args "$tool_args" \
    --server-pid "$server_pid") || true
  stop_server
  [ -z "$watcher" ] || wait "$watcher" 2>/dev/null || true
  record "$name" http "$conc" "$line" "$(child_cpu "$ticks")"
}

for conc in 1 "$concurrency"; do
  stdio_run rmcp "$conc" "$rmcp"
  stdio_run "proxy → rmcp" "$conc" "$bench" proxy --quiet-server -- "$rmcp"
  http_run rmcp "$conc" "$rmcp_http" ADDR
  http_run "proxy → rmcp" "$conc" "$bench" proxy --http ADDR --stateless --quiet-server -- "$rmcp"
done

python3 - "$results" "$calls" <<'PY' || status=1
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
print(f"{sys.argv[2]} calls of get_weather_data per row, validated at the client; through the proxy also at the proxy\n")
print("| path | transport | concurrency | calls/s | p50 ms | p99 ms | p50 added | CPU µs/call, process called | its rmcp child, µs/call | proxy / its rmcp | proxy / rmcp direct |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
def find(name, transport, conc):
    return next((r["report"] for r in rows if r["name"] == name and r["transport"] == transport and r["concurrency"] == conc and r["report"]), None)
for r in rows:
    rep = r["report"]
    if not rep:
        print(f"| {r['name']} | {r['transport']} | {r['concurrency']} | failed | | | | | | | |")
        continue
    direct = find("rmcp", r["transport"], r["concurrency"])
    added = cpu_ratio = "-"
    cpu = rep.get("server_cpu_us_per_call")
    if r["name"] != "rmcp" and direct:
        added = f"{(rep['p50_ms'] / direct['p50_ms'] - 1) * 100:+.0f}%"
        if cpu and direct.get("server_cpu_us_per_call"):
            cpu_ratio = f"{cpu / direct['server_cpu_us_per_call']:.2f}"
    cpu_text = f"{cpu:.1f}" if cpu is not None else "-"
    upstream = r.get("upstream_cpu")
    upstream_text = f"{upstream:.1f}" if upstream else "-"
    own_ratio = f"{cpu / upstream:.2f}" if cpu and upstream else "-"
    print(f"| {r['name']} | {r['transport']} | {r['concurrency']} | {rep['calls_per_second']:.0f} | {rep['p50_ms']:.3f} | {rep['p99_ms']:.3f} | {added} | {cpu_text} | {upstream_text} | {own_ratio} | {cpu_ratio} |")
    if rep.get("failures"):
        print(f"\n{r['name']} ({r['transport']}, {r['concurrency']}): {rep['failures']} failed calls", file=sys.stderr)
        sys.exit(1)
PY
exit $status
