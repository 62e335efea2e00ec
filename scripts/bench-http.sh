#!/usr/bin/env bash
# Side-by-side benchmark over Streamable HTTP: toolshape's peer_server
# (`--http`, stateless 2026-07-28) against rmcp 3.9.0's StreamableHttpService
# on axum (peers/rmcp's mcp-peer-rmcp-http, stateless, JSON responses), both driven by
# `toolshape bench --url` with many independent HTTP clients, one server at a
# time on a free loopback port. Prints one table with calls/s, p50, p99,
# failures, mismatches and the ratio to rmcp. Exits non-zero if any call was
# lost, failed or returned a result differing from the warm-up call's.
#
#   scripts/bench-http.sh [CALLS_PER_CLIENT] [CLIENTS]   (defaults: 10000 64)
#   QUICK=1 scripts/bench-http.sh                       (1000 x 64: a smoke run)
#
# Set SERVERS="toolshape" (or "rmcp") to run one side only; SKIP_BUILD=1 to
# use the binaries already built.
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

if [ -z "${SKIP_BUILD:-}" ]; then
  echo "building toolshape (release)..." >&2
  cargo build --release --locked -q -p toolshape-cli
  cargo build --release --locked -q -p toolshape --example peer_server
  echo "building the rmcp HTTP peer (release)..." >&2
  cargo build --release --locked -q --manifest-path "$root/peers/rmcp/Cargo.toml" \
    --target-dir "$work/rmcp-target" --features http --bin mcp-peer-rmcp-http
fi
bench=$root/target/release/toolshape

server_pid=""
stop_server() {
  if [ -n "$server_pid" ]; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=""
  fi
}
trap stop_server EXIT
trap 'exit 130' INT TERM

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}
wait_port() { # port pid
  for _ in $(seq 1 200); do
    if python3 -c 'import socket,sys; socket.create_connection(("127.0.0.1",int(sys.argv[1])),0.2).close()' "$1" 2>/dev/null; then
      return 0
    fi
    kill -0 "$2" 2>/dev/null || return 1
    sleep 0.05
  done
  return 1
}

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
    --concurrency "$concurrency" --calls "$calls" --tool "$tool" --args "$tool_args") || rc=$?
  stop_server
  if [ -z "$line" ]; then
    echo "toolshape bench against $name exited $rc without a report" >&2
    echo "{\"name\":\"$name\",\"report\":null}" >> "$results"
    status=1; return
  fi
  echo "{\"name\":\"$name\",\"report\":$line}" >> "$results"
  [ "$rc" -eq 0 ] || status=1
}

[[ "$want" == *" rmcp "* ]] && run rmcp "$work/rmcp-target/release/mcp-peer-rmcp-http"
[[ "$want" == *" toolshape "* ]] && run toolshape "$root/target/release/examples/peer_server" --http

python3 - "$results" "$calls" "$clients" "$concurrency" <<'PY' || status=1
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
calls, clients, concurrency = map(int, sys.argv[2:5])
base = next((r["report"]["calls_per_second"] for r in rows if r["name"] == "rmcp" and r["report"]), None)
print(f"get_weather_data over Streamable HTTP (loopback, stateless 2026-07-28), {calls} calls, "
      f"{clients} HTTP clients, concurrency {concurrency}, warm-up excluded, validation on in the client\n")
print("| server | calls/s | p50 ms | p99 ms | max ms | failed | mismatched | vs rmcp |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
bad = False
for r in rows:
    rep = r["report"]
    if not rep:
        print(f"| {r['name']} | failed to run | | | | | | |")
        bad = True
        continue
    lost = calls - rep["calls"]
    failed = rep["failures"] + lost
    bad |= failed > 0 or rep["mismatches"] > 0
    ratio = f"{rep['calls_per_second'] / base:.2f}x" if base else "-"
    print(f"| {r['name']} | {rep['calls_per_second']:.0f} | {rep['p50_ms']:.3f} | {rep['p99_ms']:.3f} | "
          f"{rep['max_ms']:.3f} | {failed} | {rep['mismatches']} | {ratio} |")
sys.exit(1 if bad else 0)
PY
exit "$status"
