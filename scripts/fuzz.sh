#!/usr/bin/env bash
# Runs every fuzz target (fuzz/fuzz_targets, cargo-fuzz on the nightly
# toolchain) for SECONDS each (default 300), starting from seed corpora built
# from the repository's test vectors, and prints executions and findings per
# target. Exits non-zero on any finding (a crash, a broken property, a hang,
# running out of memory); the input that found it is kept under
# fuzz/artifacts/<target>/ and must become a regression test.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]
#
# Environment: FUZZ_SANITIZER (none, the default, or address: the code under
# test has no unsafe code of its own; address also checks its dependencies'),
# FUZZ_TARGET_DIR (default fuzz/target), FUZZ_RSS_LIMIT_MB (default 4096),
# FUZZ_OPT_LEVEL (default 3; the test command's short run uses 1, which
# builds the targets in about two thirds of the time and runs them slower).
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-300}"
shift || true
all_targets=(
  stdio_frames
  jsonrpc_classify
  request_params
  http_headers
  schema_compile
  schema_validate
  wrap_output_schema
  workspace_paths
  otc_call
)
if [ "$#" -gt 0 ]; then targets=("$@"); else targets=("${all_targets[@]}"); fi
sanitizer="${FUZZ_SANITIZER:-none}"
target_dir="${FUZZ_TARGET_DIR:-$PWD/fuzz/target}"
rss_limit="${FUZZ_RSS_LIMIT_MB:-4096}"
# The fuzz workspace's release profile, for the build and every run alike.
export CARGO_PROFILE_RELEASE_OPT_LEVEL="${FUZZ_OPT_LEVEL:-3}"

if ! cargo +nightly --version >/dev/null 2>&1; then
  echo "fuzz.sh: the nightly toolchain is missing (rustup toolchain install nightly)" >&2
  exit 1
fi
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
  echo "== installing cargo-fuzz"
  cargo install cargo-fuzz --locked
fi

echo "== the fuzz workspace's lock file is up to date"
cargo +nightly fetch --locked --manifest-path fuzz/Cargo.toml >/dev/null

echo "== seed corpora from testdata/"
cargo run --locked --release -q --manifest-path fuzz/Cargo.toml --target-dir "$target_dir" \
  -p toolshape-fuzz-seeds -- . fuzz/corpus

echo "== building the targets (sanitizer: $sanitizer, opt-level $CARGO_PROFILE_RELEASE_OPT_LEVEL)"
(cd fuzz && cargo +nightly fuzz build -s "$sanitizer" --target-dir "$target_dir")

logs="$(mktemp -d)"
trap 'rm -rf "$logs"' EXIT
failed=0
rows=()
findings=()
for target in "${targets[@]}"; do
  echo "== $target: ${seconds} s"
  log="$logs/$target.log"
  mkdir -p "fuzz/corpus/$target"
  status=0
  (cd fuzz && cargo +nightly fuzz run -s "$sanitizer" --target-dir "$target_dir" "$target" "corpus/$target" -- \
    -max_total_time="$seconds" -timeout=20 -rss_limit_mb="$rss_limit" \
    -dict=dict/json.dict -print_final_stats=1) >"$log" 2>&1 || status=$?
  # (A run that ended without its statistics, a build that failed, say,
  # is reported below with its log, not ended here by `set -e`.)
  execs="$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' | tail -1 || true)"
  rate="$(grep -oE 'stat::average_exec_per_sec: *[0-9]+' "$log" | grep -oE '[0-9]+$' | tail -1 || true)"
  corpus="$(find "fuzz/corpus/$target" -type f | wc -l | tr -d ' ')"
  if [ "$status" -eq 0 ]; then
    finding="none"
  else
    failed=1
    artifact="$(grep -oE 'Test unit written to [^ ]+' "$log" | awk '{print $5}' | tail -1 || true)"
    reason="$(grep -m1 -E "panicked at|ERROR: libFuzzer|SUMMARY" "$log" || true)"
    finding="FOUND: ${reason:-exit $status} ${artifact:+($artifact)}"
    echo "--- $target: the end of its log"
    tail -40 "$log"
    # The message and the input itself go last, where a CI log's tail keeps
    # them: a finding on a fresh machine must be reproducible from its log.
    message="$(awk '/panicked at/ {on=1; next} on && /^(stack backtrace|note:|==)/ {exit} on' "$log" | head -c 600)"
    findings+=("- \`$target\`: ${message:-see its log above}")
    if [ -n "${artifact:-}" ] && [ -f "fuzz/${artifact#*/fuzz/}" ]; then artifact="fuzz/${artifact#*/fuzz/}"; fi
    if [ -n "${artifact:-}" ] && [ -f "$artifact" ]; then
      findings+=("  input ($(wc -c <"$artifact" | tr -d ' ') bytes, base64): $(head -c 3000 "$artifact" | base64 -w0)")
    fi
  fi
  rows+=("| \`$target\` | $seconds | ${execs:-?} | ${rate:-?} | $corpus | $finding |")
done

echo
echo "| target | seconds | executions | per second | corpus | findings |"
echo "|---|---:|---:|---:|---:|---|"
printf '%s\n' "${rows[@]}"
if [ "${#findings[@]}" -gt 0 ]; then
  echo
  echo "Findings (reproduce: base64 -d > input; cd fuzz && CARGO_PROFILE_RELEASE_OPT_LEVEL=$CARGO_PROFILE_RELEASE_OPT_LEVEL cargo +nightly fuzz run TARGET input):"
  printf '%s\n' "${findings[@]}"
fi
exit "$failed"
