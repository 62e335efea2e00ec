#!/usr/bin/env bash
# OTC against stateless MCP (2026-07-28) over HTTP, same server process, same
# tool, same run: `toolshape serve --http A --otc B` (release build), then
# `toolshape bench` on each endpoint with the server's CPU counted
# (--server-pid). Prints one JSON report per endpoint and a summary line.
# Usage: scripts/bench-otc.sh [CALLS] [CONCURRENCY]   (default 20000 8)
set -euo pipefail
cd "$(dirname "$0")/.."

CALLS="${1:-20000}"
CONCURRENCY="${2:-8}"
TARGET="${CARGO_TARGET_DIR:-$PWD/target}"
cargo build --locked --release --quiet -p toolshape-cli
TOOLSHAPE="$TARGET/release/toolshape"

WORK="$(mktemp -d)"
SERVER_PID=""
cleanup() {
  if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT
printf 'one\ntwo\nthree\n' > "$WORK/three.txt"

"$TOOLSHAPE" serve --http 127.0.0.1:0 --stateless --otc 127.0.0.1:0 --root "$WORK" 2> "$WORK/serve.log" &
SERVER_PID=$!
MCP="" OTC=""
for _ in $(seq 1 100); do
  MCP="$(sed -n 's/.*serving MCP on \(http:[^ ]*\).*/\1/p' "$WORK/serve.log" | head -n1)"
  OTC="$(sed -n 's/.*serving OTC on \(http:[^ ]*\).*/\1/p' "$WORK/serve.log" | head -n1)"
  [ -n "$MCP" ] && [ -n "$OTC" ] && break
  sleep 0.1
done
if [ -z "$MCP" ] || [ -z "$OTC" ]; then
  echo "bench-otc: the server did not start:" >&2; cat "$WORK/serve.log" >&2; exit 1
fi

ARGS='{"path":"three.txt"}'
common=(--tool count_lines --args "$ARGS" --calls "$CALLS" --concurrency "$CONCURRENCY" --server-pid "$SERVER_PID" --json)
# Alternate, twice each, so that neither endpoint gets a warmer machine.
for round in 1 2; do
  "$TOOLSHAPE" bench --url "$MCP" --protocol 2026-07-28 "${common[@]}" | tee -a "$WORK/mcp.jsonl"
  "$TOOLSHAPE" bench --otc "$OTC" "${common[@]}" | tee -a "$WORK/otc.jsonl"
done
python3 - "$WORK/mcp.jsonl" "$WORK/otc.jsonl" <<'PY'
import json, sys
def best(path):
    runs = [json.loads(line) for line in open(path) if line.strip()]
    return max(runs, key=lambda r: r["calls_per_second"])
mcp, otc = best(sys.argv[1]), best(sys.argv[2])
for name, r in (("MCP stateless HTTP", mcp), ("OTC HTTP", otc)):
    print(f"{name:20} {r['calls_per_second']:8.0f} calls/s  p50 {r['p50_ms']:.3f} ms  p99 {r['p99_ms']:.3f} ms  "
          f"server CPU {r['server_cpu_us_per_call']:.1f} us/call  failures {r['failures']}")
PY
