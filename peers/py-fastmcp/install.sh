#!/usr/bin/env bash
# Makes a venv for server.py with FastMCP 4.1.6 from PyPI, every package pinned exactly.
# Skips the install when VENV_DIR already holds these pins.
#
#   py-fastmcp/install.sh [VENV_DIR]     (default: .venv beside this script; PYTHON=... picks python3)
#
# `pip install fastmcp==4.1.6` cannot work: fastmcp-slim[server] 4.1.6 requires
# certifi>=2026.10.19, and no such certifi is on the registry. So this installs the rest of
# fastmcp-slim[client,server]'s requirements, pinned (requirements.txt), then the fastmcp and
# fastmcp-slim wheels themselves with --no-deps, checked against their sha256 (fastmcp.txt).
#
# Needs Python >= 3.10 with the venv module.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
venv=${1:-$here/.venv}
python=${PYTHON:-python3}
log() { printf 'py-fastmcp: %s\n' "$*" >&2; }
pip() { "$venv/bin/python" -m pip --disable-pip-version-check --no-input "$@"; }

want=$(cat "$here/requirements.txt" "$here/fastmcp.txt" | sha256sum | cut -d' ' -f1)
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
pip install --quiet -r "$here/requirements.txt"
pip install --quiet --no-deps --require-hashes -r "$here/fastmcp.txt"
got=$("$venv/bin/python" -c 'import fastmcp; print(fastmcp.__version__)')
if [[ $got != 4.1.6 ]]; then
  log "installed fastmcp says $got, want 4.1.6"
  exit 1
fi
printf '%s' "$want" >"$stamp"
log "ready: $venv/bin/python $here/server.py"
