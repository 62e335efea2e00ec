# One HTTP server at a time on a free loopback port, for the benchmark scripts:
# source it, start a server in the background, set server_pid=$!, wait_port PORT PID.
# shellcheck shell=bash

# Stops the background process whose pid is $1 (nothing when empty).
stop_pid() {
  if [ -n "$1" ]; then
    kill "$1" 2>/dev/null || true
    wait "$1" 2>/dev/null || true
  fi
}
server_pid=""
stop_server() { stop_pid "$server_pid"; server_pid=""; }
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
