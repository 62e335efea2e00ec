#!/usr/bin/env bash
# Soaks `toolshape serve` with exact accounting and prints it (see
# crates/toolshape-harness/src/bin/soak/main.rs):
#   - stdio: 1,000,000 calls pipelined through one connection, every id
#     answered exactly once, RSS at the end against RSS after warm-up;
#   - HTTP: 64 clients x 10,000 calls, stateless and in sessions, 0 lost or
#     mismatched, RSS bounded;
#   - 3 rounds of 1,000 sessions opened and abandoned: once they have
#     expired, the memory is measured again and every one of them is gone.
#
#   scripts/soak.sh          the full soak, release build
#   scripts/soak.sh quick    a shortened run on the debug build (the test command)
#
# Exits non-zero when anything was lost, duplicated or mismatched, or the
# server's memory grew past the bound.
set -euo pipefail
cd "$(dirname "$0")/.."

target_dir="${CARGO_TARGET_DIR:-target}"
if [ "${1:-full}" = "quick" ]; then
  profile=debug
  cargo build --locked -q -p toolshape-cli --bin toolshape -p toolshape-harness --bin soak
  stdio_calls=50000
  http_clients=16
  http_calls=500
  session_count=200
  session_rounds=2
  idle=2
else
  profile=release
  cargo build --locked -q --release -p toolshape-cli --bin toolshape -p toolshape-harness --bin soak
  stdio_calls=1000000
  http_clients=64
  http_calls=10000
  session_count=1000
  session_rounds=3
  idle=5
fi
soak="$target_dir/$profile/soak"
server="$target_dir/$profile/toolshape"

failed=0
run() {
  echo "== soak $*" >&2
  "$soak" "$@" --server "$server" || failed=1
}
run stdio --calls "$stdio_calls"
run http --mode stateless --clients "$http_clients" --calls "$http_calls"
run http --mode sessions --clients "$http_clients" --calls "$http_calls"
run sessions --count "$session_count" --rounds "$session_rounds" --idle-timeout "$idle"
exit "$failed"
