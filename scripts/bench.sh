#!/usr/bin/env bash
# Side-by-side benchmark over stdio: toolshape's peer_server against the rmcp,
# TypeScript SDK, Python SDK and FastMCP peers of peers/ (same two tools), and a raw
# echo baseline, all driven by `toolshape bench` (validation on at both ends)
# in one run. Prints one table with calls/s, p50, p99 and the ratio to rmcp,
# and the CPU time each server process spent per call ("CPU vs rmcp" above
# 1 means less CPU than rmcp): the client is shared by all, so on a small
# machine throughput is capped by it, while server CPU per call is not.
#
#   scripts/bench.sh [CALLS] [CONCURRENCY]      (defaults: 20000 8)
#
# scripts/setup-peers.sh builds and installs the peers under target/peers.
# Set PEERS="toolshape rmcp" to run a subset.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
peers_src=${PEERS_HOME:-$root/peers}
work=$root/target/peers
calls=${1:-20000}
concurrency=${2:-8}
want=${PEERS:-"toolshape rmcp ts py-mcp py-fastmcp echo canned"}
mkdir -p "$work"

has() { [[ " $want " == *" $1 "* ]]; }

echo "building toolshape (release)..." >&2
cargo build --release --locked -q -p toolshape-cli
cargo build --release --locked -q -p toolshape-harness --bin peer_server --bin echo_baseline --bin canned_baseline
bench=$root/target/release/toolshape

peer_list=""
for peer in rmcp ts py-mcp py-fastmcp; do has "$peer" && peer_list="$peer_list $peer"; done
# shellcheck disable=SC2086
[ -n "$peer_list" ] && bash scripts/setup-peers.sh $peer_list >/dev/null

weather_args='{"location":"Paris"}'
echo_args=$("$bench" call get_weather_data --args "$weather_args" -- "$root/target/release/peer_server" \
  | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin),separators=(",",":")))')

results=$work/results.jsonl
: > "$results"
run() {
  local name=$1 tool=$2 args=$3; shift 3
  echo "benchmarking $name..." >&2
  local line
  if line=$("$bench" bench --json --quiet-server --calls "$calls" --concurrency "$concurrency" \
      --tool "$tool" --args "$args" -- "$@"); then
    echo "{\"name\":\"$name\",\"report\":$line}" >> "$results"
  else
    echo "{\"name\":\"$name\",\"report\":null}" >> "$results"
  fi
}

has toolshape && run toolshape get_weather_data "$weather_args" "$root/target/release/peer_server"
has rmcp && run rmcp get_weather_data "$weather_args" "$work/rmcp-target/release/mcp-peer-rmcp"
has ts && run typescript get_weather_data "$weather_args" node "$work/ts/server.mjs"
has py-mcp && run python-mcp get_weather_data "$weather_args" "$work/py-mcp-venv/bin/python" "$peers_src/py-mcp/server.py"
has py-fastmcp && run fastmcp get_weather_data "$weather_args" "$work/py-fastmcp-venv/bin/python" "$peers_src/py-fastmcp/server.py"
has echo && run raw-echo echo "$echo_args" "$root/target/release/echo_baseline"
# The physical limit: a process answering every line with a response prepared
# at start (the same payload), finding id and method by scanning bytes.
has canned && run canned-reply get_weather_data "$weather_args" \
  "$root/target/release/canned_baseline" get_weather_data "$echo_args"

python3 - "$results" "$calls" "$concurrency" <<'PY'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
base = next((r["report"]["calls_per_second"] for r in rows if r["name"] == "rmcp" and r["report"]), None)
print(f"get_weather_data over stdio, {sys.argv[2]} calls, concurrency {sys.argv[3]}, validation on at both ends\n")
base_cpu = next((r["report"].get("server_cpu_us_per_call") for r in rows if r["name"] == "rmcp" and r["report"]), None)
print("| server | protocol | calls/s | p50 ms | p99 ms | vs rmcp | server CPU µs/call | CPU vs rmcp | failed |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
for r in rows:
    rep = r["report"]
    if not rep:
        print(f"| {r['name']} | - | failed to run | | | | | | |")
        continue
    ratio = f"{rep['calls_per_second'] / base:.2f}x" if base else "-"
    cpu = rep.get("server_cpu_us_per_call")
    cpu_text = f"{cpu:.1f}" if cpu is not None else "-"
    cpu_ratio = f"{base_cpu / cpu:.2f}x" if cpu and base_cpu else "-"
    print(f"| {r['name']} | {rep['protocol']} | {rep['calls_per_second']:.0f} | {rep['p50_ms']:.3f} | {rep['p99_ms']:.3f} | {ratio} | {cpu_text} | {cpu_ratio} | {rep['failures']} |")
PY
