#!/usr/bin/env bash
# What `toolshape proxy` costs, measured against a direct connection and
# against the floor for any process in the same place, in the same run: the
# rmcp peer (peers/rmcp) called directly, through a relay that does nothing
# but copy bytes, and through the proxy.
#
# Over stdio: rmcp direct; `relay_baseline` (copies bytes between the pipes,
# one blocking thread per direction, no parsing); the proxy's stdio front
# with rmcp as its child. Over Streamable HTTP: rmcp's own stateless HTTP
# server direct; nginx in front of it (proxy_pass, keepalive: a relay for
# HTTP); the proxy's stateless --http front with rmcp's HTTP server as its
# upstream (--url); and the proxy's --http front with rmcp as its stdio child,
# on a worker per core (the default) and on one thread (--threads 1).
# Every call is validated by `toolshape bench` at the client end; through
# the proxy the input and the output are validated once more. Each path runs
# at concurrency 1 (latency: what one call costs) and at CONCURRENCY.
#
# The machine is shared and noisy: every row runs ROUNDS times (default 3),
# the rounds interleaved (each round runs every row once), and the table
# gives each figure's median over the rounds.
#
# Prints one table: calls/s, p50, p99, what each path adds to the direct
# p50, the CPU time per call of the process the client talks to (read from
# /proc: for a relay or the proxy that process alone), and the CPU per call
# of the rmcp behind it in the same run: what a relay costs beside what the
# server itself spends serving the same calls. CPU times are read from /proc
# just before and just after each row's calls, by `toolshape bench` (its
# server and that server's child) or by this script (an HTTP upstream), so
# that no row runs beside a process polling it: every row, direct or not,
# runs alone with its client.
#
#   scripts/bench-proxy.sh [CALLS] [CONCURRENCY]   (defaults: 20000 8)
#   SKIP_BUILD=1 uses the binaries already built; ROUNDS=N sets the rounds.
#   nginx is installed from Debian when missing (as scripts/scale-out.sh does).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
work=$root/target/peers
calls=${1:-20000}
concurrency=${2:-8}
rounds=${ROUNDS:-3}
tool=get_weather_data
tool_args='{"location":"Paris"}'
mkdir -p "$work"

# shellcheck source=lib/nginx.sh
source "$root/scripts/lib/nginx.sh"

# shellcheck source=lib/proxy-bench-binaries.sh
source "$root/scripts/lib/proxy-bench-binaries.sh"

# shellcheck source=lib/one-server.sh
source "$root/scripts/lib/one-server.sh"
# The upstream of an HTTP row (rmcp's HTTP server), beside $server_pid.
upstream_pid=""
stop_upstream() { stop_pid "$upstream_pid"; upstream_pid=""; }
trap 'stop_server; stop_upstream' EXIT

hz=$(getconf CLK_TCK)
# A process's CPU ticks so far (user + system), empty once it is gone.
ticks_of() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || true; }

results=$work/proxy-results.jsonl
: > "$results"
status=0
record() { # name transport concurrency line [upstream CPU ticks]
  if [ -n "$4" ]; then
    echo "{\"name\":\"$1\",\"transport\":\"$2\",\"concurrency\":$3,\"report\":$4,\"upstream_ticks\":${5:-null}}" >> "$results"
  else
    echo "{\"name\":\"$1\",\"transport\":\"$2\",\"concurrency\":$3,\"report\":null}" >> "$results"
    status=1
  fi
}

# A stdio row: the client starts the command and reports its CPU and, for a
# relay or the proxy, that of its rmcp child (both read before and after the
# run: nothing polls while a row runs, in any row).
stdio_run() { # name concurrency command...
  local name=$1 conc=$2; shift 2
  echo "round $round: $name over stdio, concurrency $conc..." >&2
  local line=""
  line=$("$bench" bench --json --quiet-server --calls "$calls" --concurrency "$conc" \
    --tool "$tool" --args "$tool_args" -- "$@") || true
  record "$name" stdio "$conc" "$line"
}

# Starts rmcp's HTTP server as the upstream, on port $upstream_port.
upstream_port=""
start_upstream() {
  upstream_port=$(free_port)
  "$rmcp_http" "127.0.0.1:$upstream_port" >/dev/null 2>"$work/proxy-bench-upstream.stderr" &
  upstream_pid=$!
  wait_port "$upstream_port" "$upstream_pid" || { cat "$work/proxy-bench-upstream.stderr" >&2; return 1; }
}

# An nginx configuration relaying 127.0.0.1:$1 to 127.0.0.1:$2, in folder $3.
nginx_conf() { # listen upstream folder
  mkdir -p "$3"
  cat > "$3/nginx.conf" <<CONF
daemon off;
master_process off;
worker_processes 1;
pid $3/nginx.pid;
error_log $3/error.log warn;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path $3/client_body;
    proxy_temp_path $3/proxy;
    fastcgi_temp_path $3/fastcgi;
    uwsgi_temp_path $3/uwsgi;
    scgi_temp_path $3/scgi;
    upstream rmcp { server 127.0.0.1:$2; keepalive 32; }
    server {
        listen 127.0.0.1:$1;
        location /mcp {
            proxy_pass http://rmcp;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host \$host;
            proxy_buffering off;
            proxy_request_buffering off;
        }
    }
}
CONF
}

# An HTTP row. KIND: direct (rmcp's HTTP server), nginx (nginx in front of
# it), proxy-url (the proxy in front of it), proxy-child (the proxy with
# rmcp as its stdio child), proxy-child-1 (the same on one thread).
http_run() { # name kind concurrency
  local name=$1 kind=$2 conc=$3
  local port; port=$(free_port)
  local argv=()
  case $kind in
    direct) argv=("$rmcp_http" "127.0.0.1:$port") ;;
    nginx) start_upstream || { record "$name" http "$conc" ""; stop_upstream; return; }
      nginx_conf "$port" "$upstream_port" "$work/proxy-bench-nginx"
      argv=("$nginx_bin" -e "$work/proxy-bench-nginx/error.log" -p "$work/proxy-bench-nginx" -c "$work/proxy-bench-nginx/nginx.conf") ;;
    proxy-url) start_upstream || { record "$name" http "$conc" ""; stop_upstream; return; }
      argv=("$bench" proxy --http "127.0.0.1:$port" --stateless --url "http://127.0.0.1:$upstream_port/mcp") ;;
    proxy-child) argv=("$bench" proxy --http "127.0.0.1:$port" --stateless --quiet-server -- "$rmcp") ;;
    proxy-child-1) argv=("$bench" --threads 1 proxy --http "127.0.0.1:$port" --stateless --quiet-server -- "$rmcp") ;;
  esac
  "${argv[@]}" >/dev/null 2>"$work/proxy-bench-http.stderr" &
  server_pid=$!
  if ! wait_port "$port" "$server_pid"; then
    echo "$name did not listen; its stderr:" >&2; cat "$work/proxy-bench-http.stderr" >&2
    record "$name" http "$conc" ""; stop_server; stop_upstream; return
  fi
  echo "round $round: $name over HTTP, concurrency $conc..." >&2
  local before=""; [ -n "$upstream_pid" ] && before=$(ticks_of "$upstream_pid")
  local line=""
  line=$("$bench" bench --json --url "http://127.0.0.1:$port/mcp" --clients "$conc" \
    --concurrency "$conc" --calls "$calls" --tool "$tool" --args "$tool_args" \
    --server-pid "$server_pid") || true
  local used=""
  if [ -n "$upstream_pid" ]; then
    local after; after=$(ticks_of "$upstream_pid")
    [ -n "$before" ] && [ -n "$after" ] && used=$((after - before))
  fi
  stop_server
  stop_upstream
  record "$name" http "$conc" "$line" "$used"
}

for round in $(seq 1 "$rounds"); do
  for conc in 1 "$concurrency"; do
    stdio_run rmcp "$conc" "$rmcp"
    stdio_run "relay → rmcp" "$conc" "$relay" "$rmcp"
    stdio_run "proxy → rmcp" "$conc" "$bench" proxy --quiet-server -- "$rmcp"
    http_run rmcp direct "$conc"
    http_run "nginx → rmcp" nginx "$conc"
    http_run "proxy → rmcp" proxy-url "$conc"
    http_run "proxy → rmcp (stdio child)" proxy-child "$conc"
    http_run "proxy --threads 1 → rmcp (stdio child)" proxy-child-1 "$conc"
  done
done

python3 - "$results" "$calls" "$rounds" "$hz" <<'PY' || status=1
import json, statistics, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
calls, rounds, hz = sys.argv[2], sys.argv[3], int(sys.argv[4])
def trouble(report):
    """Why a row's run does not count (None when it does): a call failed,
    went unanswered, or gave another value; the run stopped early."""
    if not report:
        return "did not run"
    for what in ("failures", "unanswered", "mismatches"):
        if report.get(what):
            return f"{report[what]} {what}"
    if report.get("stopped"):
        return f"stopped: {report['stopped']}"
    if not report.get("calls") or not report.get("p50_ms"):
        return "no call answered"
    return None
failed = [r for r in rows if trouble(r["report"])]
for r in rows:
    # An HTTP upstream's ticks (its handshakes and the warm-up calls with
    # them: a few calls in 20,000) per answered call.
    ticks = r.get("upstream_ticks")
    if ticks is not None and r["report"] and r["report"].get("calls"):
        r["upstream_cpu"] = ticks * 1e6 / hz / r["report"]["calls"]
# Each (path, transport, concurrency) in first-seen order, its rounds' medians.
keys = list(dict.fromkeys((r["name"], r["transport"], r["concurrency"]) for r in rows))
def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None
table = {}
for key in keys:
    reports = [r for r in rows if (r["name"], r["transport"], r["concurrency"]) == key and not trouble(r["report"])]
    if not reports:
        table[key] = None
        continue
    table[key] = {
        "calls_per_second": median([r["report"]["calls_per_second"] for r in reports]),
        "p50_ms": median([r["report"]["p50_ms"] for r in reports]),
        "p99_ms": median([r["report"]["p99_ms"] for r in reports]),
        "cpu": median([r["report"].get("server_cpu_us_per_call") for r in reports]),
        # rmcp behind: measured apart (an HTTP upstream), or the child of
        # the process called (its stdio child), as the client reports it.
        "upstream": median([r.get("upstream_cpu") or r["report"].get("children_cpu_us_per_call") for r in reports]),
        "rounds": len(reports),
    }
print(f"{calls} calls of get_weather_data per row, validated at the client (through the proxy, also at the proxy); median of {rounds} interleaved rounds\n")
print("| path | transport | concurrency | calls/s | p50 ms | p99 ms | p50 added | CPU µs/call, process called | rmcp behind it, µs/call | relay / rmcp behind it | relay / rmcp direct |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for key in keys:
    name, transport, conc = key
    m = table[key]
    if not m:
        print(f"| {name} | {transport} | {conc} | failed | | | | | | | |")
        continue
    direct = table.get(("rmcp", transport, conc))
    added = direct_ratio = own_ratio = "-"
    if name != "rmcp" and direct:
        added = f"{(m['p50_ms'] / direct['p50_ms'] - 1) * 100:+.0f}%"
        if m["cpu"] and direct["cpu"]:
            direct_ratio = f"{m['cpu'] / direct['cpu']:.2f}"
    if name != "rmcp" and m["cpu"] and m["upstream"]:
        own_ratio = f"{m['cpu'] / m['upstream']:.2f}"
    cpu = f"{m['cpu']:.1f}" if m["cpu"] is not None else "-"
    upstream = f"{m['upstream']:.1f}" if m["upstream"] else "-"
    print(f"| {name} | {transport} | {conc} | {m['calls_per_second']:.0f} | {m['p50_ms']:.3f} | {m['p99_ms']:.3f} | {added} | {cpu} | {upstream} | {own_ratio} | {direct_ratio} |")
for r in failed:
    print(f"\n{r['name']} ({r['transport']}, {r['concurrency']}): {trouble(r['report'])}", file=sys.stderr)
sys.exit(1 if failed else 0)
PY
exit $status
