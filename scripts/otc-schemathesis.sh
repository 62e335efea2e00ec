#!/usr/bin/env bash
# Schemathesis (PyPI, pinned, in a venv of its own) against a running
# `toolshape serve --otc`, driven by the OpenAPI document the server serves
# at GET /openapi.json (the corrected OXP 1.0 document, narrowed to its
# tools), with every check, an API key required, and a fixed seed.
# Usage: scripts/otc-schemathesis.sh [MAX_EXAMPLES]   (default 100)
set -euo pipefail
cd "$(dirname "$0")/.."

SCHEMATHESIS_VERSION=4.32.5
MAX_EXAMPLES="${1:-100}"
TARGET="${CARGO_TARGET_DIR:-$PWD/target}"
VENV="$TARGET/otc-schemathesis-venv"

if [ ! -x "$VENV/bin/schemathesis" ] || ! "$VENV/bin/schemathesis" --version 2>/dev/null | grep -q "$SCHEMATHESIS_VERSION"; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$SCHEMATHESIS_VERSION"
fi

cargo build --locked --quiet -p toolshape-cli
TOOLSHAPE="$TARGET/debug/toolshape"

WORK="$(mktemp -d)"
SERVER_PID=""
cleanup() {
  if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

# A small folder for the workspace tools to read.
mkdir -p "$WORK/root/src"
printf 'one\ntwo\nthree\n' > "$WORK/root/three.txt"
printf 'name,age\nada,36\nalan,41\n' > "$WORK/root/people.csv"
printf '[package]\nname = "demo"\nversion = "0.1.0"\n' > "$WORK/root/Cargo.toml"
printf 'fn main() {}\n' > "$WORK/root/src/main.rs"

KEY="schemathesis-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')"
TOOLSHAPE_OTC_API_KEYS="$KEY" "$TOOLSHAPE" serve --otc 127.0.0.1:0 --root "$WORK/root" \
  --call-timeout 10 2> "$WORK/serve.log" &
SERVER_PID=$!
BASE=""
for _ in $(seq 1 100); do
  BASE="$(sed -n 's/.*serving OTC on \(http:[^ ]*\).*/\1/p' "$WORK/serve.log" | head -n1)"
  [ -n "$BASE" ] && break
  sleep 0.1
done
if [ -z "$BASE" ]; then
  echo "otc-schemathesis: toolshape serve --otc did not start:" >&2
  cat "$WORK/serve.log" >&2
  exit 1
fi

"$VENV/bin/python" - "$BASE" "$KEY" "$WORK/openapi.json" <<'PY'
import sys, urllib.request
base, key, out = sys.argv[1:4]
request = urllib.request.Request(base + "/openapi.json", headers={"OXP-API-Key": key})
with urllib.request.urlopen(request, timeout=10) as response, open(out, "wb") as f:
    f.write(response.read())
PY

# From the scratch folder, so that its example database stays out of the repository.
cd "$WORK"
"$VENV/bin/schemathesis" run "$WORK/openapi.json" \
  --url "$BASE" \
  -H "OXP-API-Key: $KEY" \
  --checks all \
  --max-examples "$MAX_EXAMPLES" \
  --seed 1 \
  --no-color
