#!/usr/bin/env bash
# Times `toolshape check --call read-only` on a server of 20 read-only tools
# (crates/toolshape-harness/src/bin/wide_server.rs): the target is under 5 s
# plus the server's own time. Prints, over RUNS runs (default 5), the median
# and slowest wall time of the whole check (server start, handshake, listing
# twice, every schema, every call), on `--protocol auto` and `--protocol all`
# (three revisions, so three times the work), and the server's own CPU time
# per run, which `--protocol auto` includes.
#
#   scripts/check-bench.sh [RUNS]
# TOOLSHAPE_BIN and WIDE_SERVER select prebuilt binaries instead of building
# release ones.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
if [[ -z ${TOOLSHAPE_BIN:-} || -z ${WIDE_SERVER:-} ]]; then
  cargo build --release --locked -q -p toolshape-cli -p toolshape-harness --bin toolshape --bin wide_server
  target_dir=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
fi
toolshape=${TOOLSHAPE_BIN:-$target_dir/release/toolshape}
wide=${WIDE_SERVER:-$target_dir/release/wide_server}

python3 - "$toolshape" "$wide" "$runs" <<'EOF'
import json, resource, statistics, subprocess, sys, time

toolshape, wide, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])

def once(protocol):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        [toolshape, "check", "--json", "--protocol", protocol, "--", wide, "--tools", "20"],
        stdout=subprocess.PIPE, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    report = json.loads(done.stdout)
    calls = sum(t["calls"]["valid"] + t["calls"]["invalid"] for t in report["tools"])
    if done.returncode != 0 or report["summary"]["errors"] or len(report["tools"]) != 20:
        sys.exit(f"unexpected check result (exit {done.returncode}): {report['summary']}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, calls

print(f"toolshape check --call read-only, 20 read-only tools, {runs} runs each")
print(f"{'protocol':10} {'calls':>6} {'median s':>9} {'max s':>7} {'cpu s (check+server)':>21}")
for protocol in ["auto", "all"]:
    results = [once(protocol) for _ in range(runs)]
    walls = [r[0] for r in results]
    cpus = [r[1] for r in results]
    print(f"{protocol:10} {results[0][2]:>6} {statistics.median(walls):>9.3f} {max(walls):>7.3f} "
          f"{statistics.median(cpus):>21.3f}")
    if max(walls) >= 5.0:
        sys.exit(f"--protocol {protocol}: {max(walls):.2f} s, over the 5 s target")
EOF
