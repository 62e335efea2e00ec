# The binaries the proxy benchmarks run, built in release (unless SKIP_BUILD
# is set): toolshape, the relay baseline, the rmcp peer over stdio and over
# HTTP. Sets bench, relay, rmcp and rmcp_http. Source it with $root (the
# repository) and $work (target/peers) set.
# shellcheck shell=bash

if [ -z "${SKIP_BUILD:-}" ]; then
  echo "building toolshape, the relay baseline and the rmcp peers (release)..." >&2
  cargo build --release --locked -q -p toolshape-cli
  cargo build --release --locked -q -p toolshape-harness --bin relay_baseline
  bash "$root/scripts/setup-peers.sh" rmcp >/dev/null
  cargo build --release --locked -q --manifest-path "$root/peers/rmcp/Cargo.toml" \
    --target-dir "$work/rmcp-target" --features http --bin mcp-peer-rmcp-http
fi
# shellcheck disable=SC2034 # used by the script that sources this
bench=$root/target/release/toolshape
# shellcheck disable=SC2034
relay=$root/target/release/relay_baseline
# shellcheck disable=SC2034
rmcp=$work/rmcp-target/release/mcp-peer-rmcp
# shellcheck disable=SC2034
rmcp_http=$work/rmcp-target/release/mcp-peer-rmcp-http
