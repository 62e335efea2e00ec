#!/usr/bin/env bash
# The project's test command: installs what the tests need (Rust crates from
# crates.io, Python venvs from PyPI, Node 22 and the TypeScript SDK from npm)
# and runs every suite. Safe to run again: installs are skipped when present.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s (at %d s)\n' "$*" "$SECONDS"; }

step "format, lints and docs"
cargo fmt --all -- --check
cargo fmt --manifest-path fuzz/Cargo.toml --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked --quiet
# The fuzz targets are a workspace of their own: its lock file must follow the crates' dependencies.
cargo metadata --locked --format-version 1 --manifest-path fuzz/Cargo.toml >/dev/null

step "each cargo feature on its own (a stdio-only server or client compiles no HTTP stack)"
cargo clippy --locked -q -p toolshape --no-default-features -- -D warnings
cargo clippy --locked -q -p toolshape --no-default-features --features server-http -- -D warnings
cargo clippy --locked -q -p toolshape --no-default-features --features client-http -- -D warnings
cargo clippy --locked -q -p toolshape-schema --no-default-features -- -D warnings
cargo clippy --locked -q -p toolshape-otc --all-targets -- -D warnings
cargo clippy --locked -q -p toolshape-auth --no-default-features --features client -- -D warnings
cargo clippy --locked -q -p toolshape-auth --no-default-features --features server -- -D warnings

step "peer servers for the client tests (rmcp, TypeScript SDK 1.x and 2.x, Python SDK, FastMCP)"
bash scripts/setup-peers.sh
export TOOLSHAPE_PEERS="$PWD/target/peers"

step "the peers keep their tool contract (legacy and 2026-07-28 eras)"
python3 peers/check.py

step "Rust tests (unit, integration, JSON-Schema-Test-Suite, child-process servers, HTTP on loopback, OAuth)"
command -v openssl >/dev/null || { echo "the OAuth tests generate RSA keys with the \`openssl\` command: install it" >&2; exit 1; }
cargo test --workspace --locked

step "soak, shortened: stdio and HTTP calls and abandoned sessions, every call accounted for"
bash scripts/soak.sh quick

step "Windows: the crates build for x86_64-pc-windows-gnu without lint; toolshape.exe serves, calls, proxies and answers HTTP under Wine"
bash scripts/windows.sh

step "fuzzing: every target for 20 s (cargo-fuzz on nightly; scripts/fuzz.sh SECONDS for longer runs)"
# opt-level 1: the nightly build of the targets is most of this step.
FUZZ_OPT_LEVEL=1 bash scripts/fuzz.sh 20

step "JSON-Schema-Test-Suite, one line per dialect"
cargo test --locked -q -p toolshape-schema --test json_schema_test_suite -- --nocapture --test-threads=1 2>&1 \
  | grep -E '^draft[0-9-]+(-format|-optional)?: '

step "toolshape check on four MCP servers from the registries, pinned (npm ci, pip venvs; about 3 min)"
target_dir=$(cargo metadata --format-version 1 --no-deps --locked | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
TOOLSHAPE_BIN="$target_dir/debug/toolshape" bash scripts/check-real-servers.sh --verify
step "OTC / OXP: schemathesis (every check) against a running toolshape serve --otc"
bash scripts/otc-schemathesis.sh 100

step "interop with the official MCP clients (Python SDK, TypeScript SDK)"
bash interop/setup.sh
bash interop/run.sh

step "OAuth interop (TypeScript SDK client and the CLI against a protected toolshape serve)"
bash interop/auth/run.sh

step "the official MCP conformance suite (server and client; 0.1.16 and the 0.2.0 alpha)"
bash conformance/run.sh
