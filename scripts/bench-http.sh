#!/usr/bin/env bash
# Side-by-side benchmark over Streamable HTTP: toolshape's peer_server
# (`--http`, stateless 2026-07-28) against rmcp 3.11.0's StreamableHttpService
# on axum (peers/rmcp's mcp-peer-rmcp-http, stateless, JSON responses), both driven by
# `toolshape bench --url` with many independent HTTP clients, one server at a
# time on a free loopback port. Prints one table with calls/s, p50, p99,
# failures, mismatches, the ratio to rmcp, and each server's CPU time per
# call (read from /proc; "CPU vs rmcp" above 1 means less CPU than rmcp). Exits non-zero if any call was
# lost, failed or returned a result differing from the warm-up call's.
#
#   scripts/bench-http.sh [CALLS_PER_CLIENT] [CLIENTS]   (defaults: 10000 64)
#   QUICK=1 scripts/bench-http.sh                       (1000 x 64: a smoke run)
#
# Each server is then loaded a second time by wrk (Debian's package, a
# C load generator far cheaper per request than a validating client, so that
# the server rather than the load driver is what the second table measures),
# with bench/wrk/tools-call.lua: the same call, every answer checked for a
# 200 and the expected structured content.
#
# Set SERVERS="toolshape" (or "rmcp") to run one side only; SKIP_BUILD=1 to
# use the binaries already built; WRK_SECONDS (default 15, QUICK: 5).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
work=$root/target/peers
if [ -n "${QUICK:-}" ]; then default_per_client=1000; else default_per_client=10000; fi
per_client=${1:-$default_per_client}
clients=${2:-64}
concurrency=$clients
calls=$((per_client * clients))
want=" ${SERVERS:-rmcp toolshape} "
tool=get_weather_data
tool_args='{"location":"Paris"}'
mkdir -p "$work"

wrk_seconds=${WRK_SECONDS:-$([ -n "${QUICK:-}" ] && echo 5 || echo 15)}
if ! command -v wrk >/dev/null; then
  echo "installing wrk (Debian package)..." >&2
  if ! { apt-get install -y -q wrk >/dev/null 2>&1 || { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q wrk >/dev/null 2>&1; }; }; then
    echo "error: wrk is not installed and apt-get could not install it (run as root, or install wrk)" >&2
    exit 1
  fi
fi

if [ -z "${SKIP_BUILD:-}" ]; then
  echo "building toolshape (release)..." >&2
  cargo build --release --locked -q -p toolshape-cli
  cargo build --release --locked -q -p toolshape-harness --bin peer_server
  echo "building the rmcp HTTP peer (release)..." >&2
  cargo build --release --locked -q --manifest-path "$root/peers/rmcp/Cargo.toml" \
    --target-dir "$work/rmcp-target" --features http --bin mcp-peer-rmcp-http
fi
bench=$root/target/release/toolshape

# shellcheck source=lib/one-server.sh
source "$root/scripts/lib/one-server.sh"

results=$work/http-results.jsonl
: > "$results"
status=0
run() {
  local name=$1; shift
  local port; port=$(free_port)
  "$@" "127.0.0.1:$port" >/dev/null 2>"$work/http-$name.stderr" &
  server_pid=$!
  if ! wait_port "$port" "$server_pid"; then
    echo "$name did not start listening on 127.0.0.1:$port; its stderr:" >&2
    cat "$work/http-$name.stderr" >&2
    echo "{\"name\":\"$name\",\"report\":null}" >> "$results"
    stop_server; status=1; return
  fi
  echo "benchmarking $name on 127.0.0.1:$port ($calls calls, $clients clients, concurrency $concurrency)..." >&2
  local line rc=0
  line=$("$bench" bench --json --url "http://127.0.0.1:$port/mcp" --clients "$clients" \
    --concurrency "$concurrency" --calls "$calls" --tool "$tool" --args "$tool_args" \
    --server-pid "$server_pid") || rc=$?
  stop_server
  if [ -z "$line" ]; then
    echo "toolshape bench against $name exited $rc without a report" >&2
    echo "{\"name\":\"$name\",\"report\":null}" >> "$results"
    status=1; return
  fi
  echo "{\"name\":\"$name\",\"report\":$line}" >> "$results"
  [ "$rc" -eq 0 ] || status=1
}

# The same server again, under wrk: requests/s, latency, and the server's CPU per request.
run_wrk() {
  local name=$1; shift
  local port; port=$(free_port)
  "$@" "127.0.0.1:$port" >/dev/null 2>"$work/wrk-$name.stderr" &
  server_pid=$!
  if ! wait_port "$port" "$server_pid"; then
    echo "{\"name\":\"$name\",\"wrk\":null}" >> "$results"; stop_server; status=1; return
  fi
  echo "loading $name with wrk for ${wrk_seconds}s (64 connections)..." >&2
  local before after line
  before=$(awk '{print $14 + $15}' "/proc/$server_pid/stat")
  line=$(wrk -t1 -c64 -d"${wrk_seconds}s" -s "$root/bench/wrk/tools-call.lua" "http://127.0.0.1:$port/mcp" | tail -n 1)
  after=$(awk '{print $14 + $15}' "/proc/$server_pid/stat")
  stop_server
  echo "{\"name\":\"$name\",\"wrk\":$line,\"cpu_ticks\":$((after - before))}" >> "$results"
}

rmcp_bin="$work/rmcp-target/release/mcp-peer-rmcp-http"
toolshape_bin="$root/target/release/peer_server"
[[ "$want" == *" rmcp "* ]] && run rmcp "$rmcp_bin"
[[ "$want" == *" toolshape "* ]] && run toolshape "$toolshape_bin" --http
[[ "$want" == *" rmcp "* ]] && run_wrk rmcp "$rmcp_bin"
[[ "$want" == *" toolshape "* ]] && run_wrk toolshape "$toolshape_bin" --http

python3 - "$results" "$calls" "$clients" "$concurrency" <<'PY' || status=1
import json, sys
everything = [json.loads(line) for line in open(sys.argv[1])]
rows = [r for r in everything if "report" in r]
loads = [r for r in everything if "wrk" in r]
calls, clients, concurrency = map(int, sys.argv[2:5])
base = next((r["report"]["calls_per_second"] for r in rows if r["name"] == "rmcp" and r["report"]), None)
print(f"get_weather_data over Streamable HTTP (loopback, stateless 2026-07-28), {calls} calls, "
      f"{clients} HTTP clients, concurrency {concurrency}, warm-up excluded, validation on in the client\n")
base_cpu = next((r["report"].get("server_cpu_us_per_call") for r in rows if r["name"] == "rmcp" and r["report"]), None)
print("| server | calls/s | p50 ms | p99 ms | max ms | failed | mismatched | vs rmcp | server CPU µs/call | CPU vs rmcp |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
bad = False
for r in rows:
    rep = r["report"]
    if not rep:
        print(f"| {r['name']} | failed to run | | | | | | | | |")
        bad = True
        continue
    lost = calls - rep["calls"]
    failed = rep["failures"] + lost
    bad |= failed > 0 or rep["mismatches"] > 0
    ratio = f"{rep['calls_per_second'] / base:.2f}x" if base else "-"
    cpu = rep.get("server_cpu_us_per_call")
    cpu_text = f"{cpu:.1f}" if cpu is not None else "-"
    cpu_ratio = f"{base_cpu / cpu:.2f}x" if cpu and base_cpu else "-"
    print(f"| {r['name']} | {rep['calls_per_second']:.0f} | {rep['p50_ms']:.3f} | {rep['p99_ms']:.3f} | "
          f"{rep['max_ms']:.3f} | {failed} | {rep['mismatches']} | {ratio} | {cpu_text} | {cpu_ratio} |")
if loads:
    print(f"\nThe same call under wrk (one thread, 64 connections, every answer checked): the server, not the load driver, is the limit\n")
    print("| server | requests/s | p50 ms | p99 ms | bad answers | socket errors | vs rmcp | server CPU µs/request | CPU vs rmcp |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    def rate(r):
        return r["wrk"]["requests"] / r["wrk"]["seconds"] if r["wrk"] else None
    def cpu(r):
        return r["cpu_ticks"] * 10_000 / max(r["wrk"]["requests"], 1) if r["wrk"] else None
    base_rate = next((rate(r) for r in loads if r["name"] == "rmcp"), None)
    base_cpu_w = next((cpu(r) for r in loads if r["name"] == "rmcp"), None)
    for r in loads:
        w = r["wrk"]
        if not w:
            print(f"| {r['name']} | failed to run | | | | | | | |")
            bad = True
            continue
        bad |= w["bad"] > 0 or w["socket_errors"] > 0
        vs = f"{rate(r) / base_rate:.2f}x" if base_rate else "-"
        vs_cpu = f"{base_cpu_w / cpu(r):.2f}x" if base_cpu_w and cpu(r) else "-"
        print(f"| {r['name']} | {rate(r):.0f} | {w['p50_ms']:.3f} | {w['p99_ms']:.3f} | {w['bad']} | "
              f"{w['socket_errors']} | {vs} | {cpu(r):.1f} | {vs_cpu} |")
sys.exit(1 if bad else 0)
PY
exit "$status"
