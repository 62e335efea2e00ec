#!/usr/bin/env bash
# Builds and installs the repository's peer servers (peers/, see peers/README.md) under
# target/peers: the rmcp peer with cargo --locked, the TypeScript SDK peers (1.x and 2.x) with npm ci, the
# Python SDK and FastMCP peers in venvs with exact pins from PyPI. Each step is skipped when
# what it would install is already there (cargo and the install scripts check themselves;
# npm ci runs when package-lock.json changed). Prints the environment the peer tests read.
#
#   scripts/setup-peers.sh [rmcp] [ts] [ts2] [py-mcp] [py-fastmcp]   (default: all)
#
# PEERS_HOME=DIR takes the peers' sources from DIR instead of peers/.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
peers=${PEERS_HOME:-$root/peers}
work=$root/target/peers
want=" ${*:-rmcp ts ts2 py-mcp py-fastmcp} "
has() { [[ "$want" == *" $1 "* ]]; }
log() { printf 'setup-peers: %s\n' "$*" >&2; }
for peer in $want; do
  case $peer in
    rmcp | ts | ts2 | py-mcp | py-fastmcp) ;;
    *) log "unknown peer '$peer' (known: rmcp ts ts2 py-mcp py-fastmcp)"; exit 2 ;;
  esac
done
mkdir -p "$work"

if has rmcp; then
  log "rmcp peer: cargo build --release --locked (a no-op when fresh)"
  cargo build --release --locked -q --manifest-path "$peers/rmcp/Cargo.toml" \
    --target-dir "$work/rmcp-target" --bin mcp-peer-rmcp
  [ -x "$work/rmcp-target/release/mcp-peer-rmcp" ] || { log "the rmcp peer was not built"; exit 1; }
fi

# The TypeScript peers: ts on the SDK's 1.x line, ts2 on its 2.x line (ts2 links to ts's shapes.mjs
# and weather.mjs; cp copies what the links point to).
for node_peer in ts ts2; do
  if has "$node_peer"; then
    # Sources are copied next to their node_modules so the repository tree stays clean.
    mkdir -p "$work/$node_peer"
    cp "$peers/$node_peer/package.json" "$peers/$node_peer/package-lock.json" "$peers/$node_peer/"*.mjs "$work/$node_peer/"
    stamp=$work/$node_peer/node_modules/.peer-stamp
    lock=$(sha256sum "$work/$node_peer/package.json" "$work/$node_peer/package-lock.json" | sha256sum | cut -d' ' -f1)
    if [[ -f $stamp && $(<"$stamp") == "$lock" ]]; then
      log "TypeScript peer $node_peer: node_modules up to date"
    else
      log "TypeScript peer $node_peer: npm ci"
      (cd "$work/$node_peer" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
      printf '%s' "$lock" >"$stamp"
    fi
  fi
done

for py in py-mcp py-fastmcp; do
  if has "$py"; then
    bash "$peers/$py/install.sh" "$work/$py-venv"
  fi
done
echo "TOOLSHAPE_PEERS=$work"
