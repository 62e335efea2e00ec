#!/usr/bin/env bash
# Makes a venv from a requirements.txt that pins every package exactly (a pip freeze of a
# clean install), for the Python peers. Skips the install when the venv already holds these pins.
#
#   peers/venv.sh NAME REQUIREMENTS VENV_DIR MIN_PYTHON CHECK_IMPORT    (PYTHON=... picks python3)
#
# CHECK_IMPORT is imported once installed, so that a broken install fails here, not when a test
# starts the server.
set -euo pipefail
name=$1 requirements=$2 venv=$3 min_python=$4 check_import=$5
python=${PYTHON:-python3}
log() { printf '%s: %s\n' "$name" "$*" >&2; }

want=$(sha256sum "$requirements" | cut -d' ' -f1)
stamp=$venv/.peer-stamp
if [[ -x $venv/bin/python && -f $stamp && $(<"$stamp") == "$want" ]]; then
  log "$venv is up to date"
  exit 0
fi
if ! "$python" -c "import sys; sys.exit(sys.version_info < tuple(map(int, '$min_python'.split('.'))))"; then
  log "needs Python >= $min_python; $python is $("$python" --version 2>&1)"
  exit 1
fi
log "installing into $venv"
"$python" -m venv --clear "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input -r "$requirements"
"$venv/bin/python" -c "import $check_import"
printf '%s' "$want" >"$stamp"
log "ready: $venv/bin/python"
