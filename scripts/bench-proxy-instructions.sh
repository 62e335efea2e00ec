#!/usr/bin/env bash
# What `toolshape proxy` costs per call in instructions, beside the rmcp peer
# serving the same call: counted by valgrind (callgrind), so the figures do
# not move with the machine's load the way CPU time does. A companion to
# scripts/bench-proxy.sh, which measures time.
#
# Each row runs the process under callgrind twice, for FEW and for MANY
# calls of rmcp's get_weather_data at concurrency 1 (each call validated by
# `toolshape bench` at the client end), and divides the difference of the two
# instruction counts by the difference of the calls: start-up, the handshake
# and shutdown fall out. Only the process named is counted (a relay's or the
# proxy's rmcp child runs natively).
#
# Rows: rmcp over stdio; relay_baseline (copies bytes) in front of rmcp; the
# proxy's stdio front with rmcp as its child; rmcp's own stateless HTTP
# server; the proxy's stateless HTTP front on one thread with rmcp as its
# stdio child. Instructions are not time: a cache miss or a system call
# costs far more than one instruction, and the kernel's work is not counted.
#
#   scripts/bench-proxy-instructions.sh [FEW] [MANY]   (defaults: 500 2500)
#   SKIP_BUILD=1 uses the binaries already built.
#   valgrind is installed from Debian when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
work=$root/target/peers
few=${1:-500}
many=${2:-2500}
tool=get_weather_data
tool_args='{"location":"Paris"}'
mkdir -p "$work"

if ! command -v valgrind >/dev/null; then
  echo "installing valgrind (Debian)..." >&2
  sudo_cmd=""; [ "$(id -u)" -ne 0 ] && sudo_cmd=sudo
  $sudo_cmd apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq valgrind >/dev/null
fi

# shellcheck source=lib/proxy-bench-binaries.sh
source "$root/scripts/lib/proxy-bench-binaries.sh"

# shellcheck source=lib/one-server.sh
source "$root/scripts/lib/one-server.sh"

out=$work/proxy-instructions
rm -rf "$out"; mkdir -p "$out"
grind=(valgrind --tool=callgrind --quiet)
# The instructions a callgrind profile counted.
total_of() { awk '/^totals:/ {print $2}' "$1"; }
results=$out/results.txt
: > "$results"
status=0

# A stdio row: the client starts the command under callgrind.
stdio_row() { # name command...
  local name=$1; shift
  local n
  for n in "$few" "$many"; do
    echo "$name over stdio, $n calls under callgrind..." >&2
    if ! "$bench" bench --json --quiet-server --calls "$n" --concurrency 1 --timeout 120 \
      --tool "$tool" --args "$tool_args" -- \
      "${grind[@]}" --callgrind-out-file="$out/$name.$n.out" "$@" > "$out/$name.$n.json"; then
      echo "$name: the bench failed" >&2; status=1; return
    fi
  done
  echo "$name|stdio|$(total_of "$out/$name.$few.out")|$(total_of "$out/$name.$many.out")" >> "$results"
}

# An HTTP row: the server runs under callgrind; the client connects to it.
http_row() { # name command-with-PORT...
  local name=$1; shift
  local n port argv
  for n in "$few" "$many"; do
    port=$(free_port)
    argv=("${@//PORT/$port}")
    "${grind[@]}" --callgrind-out-file="$out/$name.$n.out" "${argv[@]}" \
      >/dev/null 2>"$out/$name.$n.stderr" &
    server_pid=$!
    if ! wait_port "$port" "$server_pid"; then
      echo "$name did not listen; its stderr:" >&2; cat "$out/$name.$n.stderr" >&2
      stop_server; status=1; return
    fi
    echo "$name over HTTP, $n calls under callgrind..." >&2
    if ! "$bench" bench --json --url "http://127.0.0.1:$port/mcp" --calls "$n" --concurrency 1 \
      --timeout 120 --tool "$tool" --args "$tool_args" > "$out/$name.$n.json"; then
      echo "$name: the bench failed" >&2; stop_server; status=1; return
    fi
    # callgrind writes its profile when the process ends on SIGTERM.
    stop_server
  done
  echo "$name|http|$(total_of "$out/$name.$few.out")|$(total_of "$out/$name.$many.out")" >> "$results"
}

stdio_row rmcp "$rmcp"
stdio_row relay "$relay" "$rmcp"
stdio_row proxy "$bench" proxy --quiet-server -- "$rmcp"
http_row rmcp-http "$rmcp_http" 127.0.0.1:PORT
http_row proxy-http "$bench" --threads 1 proxy --http 127.0.0.1:PORT --stateless --quiet-server -- "$rmcp"

python3 - "$results" "$few" "$many" <<'PY' || status=1
import sys
few, many = int(sys.argv[2]), int(sys.argv[3])
rows = {}
for line in open(sys.argv[1]):
    name, transport, a, b = line.strip().split("|")
    rows[name] = (transport, (int(b) - int(a)) / (many - few))
names = {
    "rmcp": "rmcp",
    "relay": "relay → rmcp",
    "proxy": "proxy → rmcp",
    "rmcp-http": "rmcp",
    "proxy-http": "proxy --threads 1 → rmcp (stdio child)",
}
direct = {"stdio": rows.get("rmcp"), "http": rows.get("rmcp-http")}
print(f"instructions per call of get_weather_data at concurrency 1 ({many} - {few} calls), the process named only\n")
print("| path | transport | instructions per call | / rmcp direct, same transport |")
print("|---|---|---:|---:|")
for key, (transport, per_call) in rows.items():
    base = direct.get(transport)
    ratio = f"{per_call / base[1]:.2f}" if base and key not in ("rmcp", "rmcp-http") else "-"
    print(f"| {names.get(key, key)} | {transport} | {per_call / 1000:.1f}k | {ratio} |")
PY
exit $status
