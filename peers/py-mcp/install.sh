#!/usr/bin/env bash
# Makes a venv for server.py with the official Python MCP SDK from PyPI, every package pinned
# exactly (requirements.txt). Skips the install when VENV_DIR already holds these pins.
#
#   py-mcp/install.sh [VENV_DIR]     (default: .venv beside this script; PYTHON=... picks python3)
#
# Needs Python >= 3.10 with the venv module.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
venv=${1:-$here/.venv}
python=${PYTHON:-python3}
log() { printf 'py-mcp: %s\n' "$*" >&2; }

want=$(sha256sum "$here/requirements.txt" | cut -d' ' -f1)
stamp=$venv/.peer-stamp
if [[ -x $venv/bin/python && -f $stamp && $(<"$stamp") == "$want" ]]; then
  log "$venv is up to date"
  exit 0
fi
if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 10))'; then
  log "needs Python >= 3.10; $python is $("$python" --version 2>&1)"
  exit 1
fi
log "installing into $venv"
"$python" -m venv --clear "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input -r "$here/requirements.txt"
"$venv/bin/python" -c 'import mcp.server.mcpserver'   # fail here, not when a test starts the server
printf '%s' "$want" >"$stamp"
log "ready: $venv/bin/python $here/server.py"
