#!/usr/bin/env bash
# Scale-out check: two stateless `toolshape serve --http` instances behind an
# nginx round-robin load balancer, driven by `toolshape bench`. Shows from
# nginx's access log that both instances served requests, that requests of
# one client connection were spread over both (no sticky sessions: stateless
# 2026-07-28 needs none, and no Mcp-Session-Id is ever issued), and that no
# call failed. Loopback only; nginx runs in the foreground of a background
# job with a config in a temp dir (no system service). Everything started
# here is stopped on exit.
#
#   scripts/scale-out.sh [CALLS] [CLIENTS] [CONCURRENCY]   (defaults: 20000 8 32)
#
# BACKEND=proxy puts a `toolshape proxy --http --stateless` in each instance's
# place, each in front of its own `toolshape serve` over stdio: the gateway
# scales out the same way (each proxy owns its child, nothing is shared).
#
# Installs nginx from Debian (nginx-light, else nginx) if `nginx` is missing.
# Set SKIP_BUILD=1 to use the toolshape binary already built.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
calls=${1:-20000}
clients=${2:-8}
concurrency=${3:-32}
backend=${BACKEND:-serve}

# shellcheck source=lib/nginx.sh
source "$root/scripts/lib/nginx.sh"

if [ -z "${SKIP_BUILD:-}" ]; then
  echo "building toolshape (release)..." >&2
  cargo build --release --locked -q -p toolshape-cli
fi
toolshape=$root/target/release/toolshape

tmp=$(mktemp -d)
pids=()
cleanup() {
  local pid
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}
wait_port() { # port pid name
  for _ in $(seq 1 200); do
    if python3 -c 'import socket,sys; socket.create_connection(("127.0.0.1",int(sys.argv[1])),0.2).close()' "$1" 2>/dev/null; then
      return 0
    fi
    if ! kill -0 "$2" 2>/dev/null; then
      echo "$3 exited before listening on 127.0.0.1:$1" >&2; return 1
    fi
    sleep 0.05
  done
  echo "$3 is not listening on 127.0.0.1:$1" >&2; return 1
}

p1=$(free_port); p2=$(free_port); p0=$(free_port)
for port in "$p1" "$p2"; do
  case $backend in
    serve) "$toolshape" serve --http "127.0.0.1:$port" --stateless --root . 2>"$tmp/serve-$port.log" & ;;
    proxy) "$toolshape" proxy --http "127.0.0.1:$port" --stateless -- "$toolshape" serve --root . \
             2>"$tmp/serve-$port.log" & ;;
    *) echo "BACKEND is serve or proxy, not $backend" >&2; exit 2 ;;
  esac
  pids+=($!)
  wait_port "$port" "$!" "toolshape $backend on $port" || { cat "$tmp/serve-$port.log" >&2; exit 1; }
done

mkdir -p "$tmp/nginx"
cat > "$tmp/nginx/nginx.conf" <<EOF
daemon off;
worker_processes 1;
pid $tmp/nginx/nginx.pid;
error_log $tmp/nginx/error.log warn;
events { worker_connections 1024; }
http {
    log_format upstreams '\$request_method|\$connection|\$upstream_addr|\$status|\$upstream_status|'
                         '\$upstream_http_mcp_session_id|\$request_time';
    access_log $tmp/nginx/access.log upstreams;
    client_body_temp_path $tmp/nginx/client_body;
    proxy_temp_path $tmp/nginx/proxy;
    fastcgi_temp_path $tmp/nginx/fastcgi;
    uwsgi_temp_path $tmp/nginx/uwsgi;
    scgi_temp_path $tmp/nginx/scgi;

    upstream toolshape {
        # Round-robin (the default): no ip_hash, no sticky cookie.
        server 127.0.0.1:$p1;
        server 127.0.0.1:$p2;
        keepalive 32;
    }
    server {
        listen 127.0.0.1:$p0;
        location /mcp {
            proxy_pass http://toolshape;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            # The instances check Host (DNS rebinding): pass the client's on.
            proxy_set_header Host \$host;
            # Streamable HTTP may answer with an SSE stream: pass it through as it comes.
            proxy_buffering off;
            proxy_request_buffering off;
            proxy_cache off;
            proxy_read_timeout 300s;
        }
    }
}
EOF
"$nginx_bin" -t -q -e "$tmp/nginx/error.log" -p "$tmp/nginx" -c "$tmp/nginx/nginx.conf"
"$nginx_bin" -e "$tmp/nginx/error.log" -p "$tmp/nginx" -c "$tmp/nginx/nginx.conf" &
pids+=($!)
wait_port "$p0" "$!" nginx || { cat "$tmp/nginx/error.log" >&2; exit 1; }

echo "nginx on 127.0.0.1:$p0 -> toolshape $backend --stateless on 127.0.0.1:$p1 and 127.0.0.1:$p2" >&2
echo "benchmarking count_lines: $calls calls, $clients clients, concurrency $concurrency..." >&2
rc=0
report=$("$toolshape" bench --json --url "http://127.0.0.1:$p0/mcp" --clients "$clients" \
  --concurrency "$concurrency" --calls "$calls" --tool count_lines --args '{"path":"Cargo.toml"}') || rc=$?
sleep 0.2 # let nginx write the last access-log lines
# For scale: the same load straight to one instance, no proxy (not a pass/fail check).
direct=$("$toolshape" bench --json --url "http://127.0.0.1:$p1/mcp" --clients "$clients" \
  --concurrency "$concurrency" --calls "$calls" --tool count_lines --args '{"path":"Cargo.toml"}') || true

python3 - "$tmp/nginx/access.log" "$calls" "$rc" "$report" "$p1" "$p2" "$direct" "$backend" <<'PY'
import collections, json, sys
log, calls, rc, report, p1, p2 = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5], sys.argv[6]
direct = json.loads(sys.argv[7]) if sys.argv[7] else None
per_upstream = collections.Counter()
statuses = collections.Counter()
conn_upstreams = collections.defaultdict(set)
sessions = 0
lines = 0
for line in open(log):
    method, conn, upstream, status, _upstream_status, session, _time = line.rstrip("\n").split("|")
    lines += 1
    per_upstream[upstream] += 1
    statuses[(method, status)] += 1
    conn_upstreams[conn].add(upstream)
    if session not in ("", "-"):
        sessions += 1
ok = True
if not report:
    print(f"toolshape bench exited {rc} without a report")
    sys.exit(1)
rep = json.loads(report)
print(f"count_lines {{\"path\":\"Cargo.toml\"}} through nginx round-robin over 2 x toolshape {sys.argv[8]} --http --stateless\n")
print("| path | calls | clients | concurrency | calls/s | p50 ms | p99 ms | max ms | failed | mismatched | protocol |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
lost = calls - rep["calls"]
def row(name, r):
    print(f"| {name} | {r['calls']} | {r['clients']} | {r['concurrency']} | {r['calls_per_second']:.0f} | {r['p50_ms']:.3f} | "
          f"{r['p99_ms']:.3f} | {r['max_ms']:.3f} | {r['failures'] + calls - r['calls']} | {r['mismatches']} | {r['protocol']} |")
row("nginx -> 2 instances", rep)
if direct:
    row("direct -> 1 instance (for scale)", direct)
print("\nnginx access log (all requests, warm-up and discovery included):\n")
print("| upstream | requests | share |")
print("|---|---:|---:|")
for upstream, n in sorted(per_upstream.items()):
    print(f"| {upstream} | {n} | {100 * n / max(lines, 1):.1f}% |")
print(f"\nstatuses: {dict((f'{m} {st}', n) for (m, st), n in statuses.items())}; responses carrying Mcp-Session-Id: {sessions}")
multi = sum(1 for ups in conn_upstreams.values() if len(ups) > 1)
print(f"client connections: {len(conn_upstreams)}, of which {multi} had requests served by both instances")
expected = {f"127.0.0.1:{p1}", f"127.0.0.1:{p2}"}
if set(per_upstream) != expected:
    print(f"FAIL: requests went to {sorted(per_upstream)}, expected exactly {sorted(expected)}"); ok = False
# A stateless instance offers no server-initiated stream: the client's GET
# for one is answered 405, as the transport says it must be. Nothing else
# may fail.
if any(st != "200" and (m, st) != ("GET", "405") for m, st in statuses):
    print("FAIL: some responses were neither 200 nor the 405 a stateless GET gets"); ok = False
if rep["failures"] + lost + rep["mismatches"] or rc:
    print(f"FAIL: failures/lost/mismatches (bench exit {rc})"); ok = False
if sessions:
    print("FAIL: a session id was issued"); ok = False
if multi == 0:
    print("FAIL: no client connection was spread over both instances"); ok = False
sys.exit(0 if ok else 1)
PY
