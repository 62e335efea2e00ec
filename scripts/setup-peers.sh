#!/usr/bin/env bash
# Builds and installs the repository's peer servers (peers/, see peers/README.md) under
# target/peers: the rmcp peer with cargo --locked, the TypeScript SDK peer with npm ci, the
# Python SDK and FastMCP peers in venvs with exact pins from PyPI. Each step is skipped when
# what it would install is already there (cargo and the install scripts check themselves;
# npm ci runs when package-lock.json changed). Prints the environment the peer tests read.
#
#   scripts/setup-peers.sh [rmcp] [ts] [py-mcp] [py-fastmcp]   (default: all)
#
# PEERS_HOME=DIR takes the peers' sources from DIR instead of peers/.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
peers=${PEERS_HOME:-$root/peers}
work=$root/target/peers
want=" ${*:-rmcp ts py-mcp py-fastmcp} "
has() { [[ "$want" == *" $1 "* ]]; }
log() { printf 'setup-peers: %s\n' "$*" >&2; }
for peer in $want; do
  case $peer in
    rmcp | ts | py-mcp | py-fastmcp) ;;
    *) log "unknown peer '$peer' (known: rmcp ts py-mcp py-fastmcp)"; exit 2 ;;
  esac
done
mkdir -p "$work"

if has rmcp; then
  log "rmcp peer: cargo build --release --locked (a no-op when fresh)"
  cargo build --release --locked -q --manifest-path "$peers/rmcp/Cargo.toml" \
    --target-dir "$work/rmcp-target" --bin mcp-peer-rmcp
  [ -x "$work/rmcp-target/release/mcp-peer-rmcp" ] || { log "the rmcp peer was not built"; exit 1; }
fi

if has ts; then
  # Sources are copied next to their node_modules so the repository tree stays clean.
  mkdir -p "$work/ts"
  cp "$peers/ts/package.json" "$peers/ts/package-lock.json" "$peers/ts/"*.mjs "$work/ts/"
  stamp=$work/ts/node_modules/.peer-stamp
  lock=$(sha256sum "$work/ts/package.json" "$work/ts/package-lock.json" | sha256sum | cut -d' ' -f1)
  if [[ -f $stamp && $(<"$stamp") == "$lock" ]]; then
    log "TypeScript peer: node_modules up to date"
  else
    log "TypeScript peer: npm ci"
    (cd "$work/ts" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
    printf '%s' "$lock" >"$stamp"
  fi
fi

for py in py-mcp py-fastmcp; do
  if has "$py"; then
    bash "$peers/$py/install.sh" "$work/$py-venv"
  fi
done
echo "TOOLSHAPE_PEERS=$work"
