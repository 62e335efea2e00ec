#!/usr/bin/env bash
# Makes a venv for server.py with FastMCP 4.2.3 from PyPI, every package pinned exactly
# (requirements.txt). Skips the install when VENV_DIR already holds these pins.
#
#   py-fastmcp/install.sh [VENV_DIR]     (default: .venv beside this script; PYTHON=... picks python3)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
exec bash "$here/../venv.sh" py-fastmcp "$here/requirements.txt" "${1:-$here/.venv}" 3.11 fastmcp
