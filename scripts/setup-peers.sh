#!/usr/bin/env bash
# Builds and installs the peer servers of ../shared/peers under target/peers
# (that folder is read-only): the rmcp peer with cargo, the TypeScript peer
# with npm, the Python SDK and FastMCP peers in venvs from PyPI. Skips what
# is already there. Prints the environment the peer tests read.
#
#   scripts/setup-peers.sh [rmcp] [ts] [py-mcp] [py-fastmcp]   (default: all)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
peers_src=${PEERS_HOME:-$root/../shared/peers}
work=$root/target/peers
want=" ${*:-rmcp ts py-mcp py-fastmcp} "
mkdir -p "$work"
has() { [[ "$want" == *" $1 "* ]]; }

if has rmcp && [ ! -x "$work/rmcp-target/release/mcp-peer-rmcp" ]; then
  echo "building the rmcp peer..." >&2
  rm -rf "$work/rmcp-src" && cp -r "$peers_src/rmcp" "$work/rmcp-src" && chmod -R u+w "$work/rmcp-src"
  cargo build --release -q --manifest-path "$work/rmcp-src/Cargo.toml" --target-dir "$work/rmcp-target"
fi
if has ts && [ ! -d "$work/ts/node_modules" ]; then
  echo "installing the TypeScript peer..." >&2
  rm -rf "$work/ts" && cp -r "$peers_src/ts" "$work/ts" && chmod -R u+w "$work/ts"
  (cd "$work/ts" && npm ci --silent --no-audit --no-fund >/dev/null)
fi
for py in py-mcp py-fastmcp; do
  if has "$py" && [ ! -x "$work/$py-venv/bin/python" ]; then
    echo "installing the $py peer..." >&2
    bash "$peers_src/$py/install.sh" "$work/$py-venv" >/dev/null
  fi
done
echo "TOOLSHAPE_PEERS=$work"
