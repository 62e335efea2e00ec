#!/usr/bin/env bash
# The project's test command: installs what the tests need (Rust crates from
# crates.io, Python venvs from PyPI, Node 22 and the TypeScript SDK from npm)
# and runs every suite. Safe to run again: installs are skipped when present.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s\n' "$*"; }

step "format and lints"
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings

step "Rust tests (unit, integration, JSON-Schema-Test-Suite, child-process servers)"
cargo test --workspace --locked

step "interop with the official MCP clients (Python SDK, TypeScript SDK)"
bash interop/setup.sh
bash interop/run.sh
