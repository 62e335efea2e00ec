#!/usr/bin/env python3
"""Peak memory, time and reply size of `toolshape serve` under hostile calls.

Spawns `toolshape serve --root <tmp>` over stdio (2026-07-28 requests, no
handshake) once per scenario, sends the scenario's calls all at once, reads
every reply, and reports for the server process:

- peak RSS (VmHWM from /proc/<pid>/status, Linux only) and RSS afterwards,
- wall time from the first request to the last reply, and the server's CPU
  time (user + system) by then,
- total reply bytes, how many replies were isError, and whether the
  process survived.

Scenarios:
- `csv-N`: N concurrent `analyze_dataset` calls (descriptive and correlation
  alternating) on a dense CSV at the tool's limits (200000 rows of
  40 one-digit numbers, 16 MB);
- `glob-NAME`: one `find` call with a hostile glob (nested braces, many
  stars, a long literal).

    scripts/measure-workspace.py [--bin target/release/toolshape] [--only csv-8,glob-stars-1m] [-- extra serve args]

Build first: `cargo build --release --locked -p toolshape-cli`.
"""

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time

MODERN = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "measure-workspace", "version": "0"},
}

GLOBS = {
    "glob-braces-20k": "{" * 20_000 + "}" * 20_000,
    "glob-braces-260": "{a" * 260 + "}" * 260,
    "glob-stars-100k": "*" * 100_000,
    "glob-literal-1m": "a" * 1_000_000,
    "glob-stars-300k": "*" * 300_000,
    "glob-stars-1m": "*" * 1_000_000,
}


def dense_csv(path, rows=200_000, columns=40):
    """As many numbers as the tool's limits allow: 200000 rows (the row limit)
    of 40 one-digit values, 16000000 bytes (the size limit is 16 MiB)."""
    rng = random.Random(42)
    header = ",".join(f"c{i}" for i in range(columns)) + "\n"
    written = len(header)
    lines = [header]
    for _ in range(rows):
        row = ",".join(str(rng.randrange(10)) for _ in range(columns)) + "\n"
        lines.append(row)
        written += len(row)
    with open(path, "w", encoding="ascii") as out:
        out.writelines(lines)
    return written, len(lines) - 1


def proc_status(pid):
    """VmHWM and VmRSS in KiB, or None when the process is gone."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            fields = dict(
                line.split(":", 1) for line in status.read().splitlines() if ":" in line
            )
    except (FileNotFoundError, ProcessLookupError):
        return None
    kib = lambda key: int(fields[key].split()[0]) if key in fields else 0  # noqa: E731
    return kib("VmHWM"), kib("VmRSS")


def cpu_seconds(pid):
    """User plus system CPU time of the process so far, or None when gone."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return None
    # Fields 14 and 15 (utime, stime) counted from 1, after the comm field.
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run(binary, root, extra, calls, timeout):
    """Sends `calls` (list of (tool, arguments)) at once; returns a result dict."""
    server = subprocess.Popen(
        [binary, "serve", "--root", root, *extra],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    stderr_chunks = []
    drain = threading.Thread(
        target=lambda: stderr_chunks.append(server.stderr.read()), daemon=True
    )
    drain.start()
    time.sleep(0.3)
    baseline = proc_status(server.pid)
    started = time.monotonic()
    payload = bytearray()
    for index, (tool, arguments) in enumerate(calls, start=1):
        request = {
            "jsonrpc": "2.0",
            "id": index,
            "method": "tools/call",
            "params": {"name": tool, "arguments": arguments, "_meta": META},
        }
        payload += json.dumps(request).encode() + b"\n"
    writer = threading.Thread(
        target=lambda: (server.stdin.write(payload), server.stdin.flush()), daemon=True
    )
    writer.start()
    replies, reply_bytes, errors, messages = 0, 0, 0, []
    deadline = started + timeout
    while replies < len(calls) and time.monotonic() < deadline:
        line = server.stdout.readline()
        if not line:
            break
        reply_bytes += len(line)
        message = json.loads(line)
        if "id" not in message:
            continue
        replies += 1
        result = message.get("result") or {}
        if result.get("isError") or "error" in message:
            errors += 1
            text = "".join(
                block.get("text", "") for block in result.get("content", [])
            ) or json.dumps(message.get("error"))
            messages.append(text[:160])
    elapsed = time.monotonic() - started
    status = proc_status(server.pid)
    cpu = cpu_seconds(server.pid)
    time.sleep(0.5)
    after = proc_status(server.pid)
    alive = server.poll() is None
    if alive:
        server.stdin.close()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    drain.join(timeout=5)
    peak = max((s[0] for s in (status, after) if s), default=None)
    return {
        "calls": len(calls),
        "replies": replies,
        "is_error": errors,
        "seconds": round(elapsed, 3),
        "server_cpu_seconds": round(cpu, 2) if cpu is not None else None,
        "reply_bytes": reply_bytes,
        "baseline_rss_mib": round(baseline[1] / 1024, 1) if baseline else None,
        "peak_rss_mib": round(peak / 1024, 1) if peak else None,
        "rss_after_mib": round(after[1] / 1024, 1) if after else None,
        "survived": alive,
        "exit": server.returncode,
        "first_error": messages[0] if messages else None,
        "stderr_bytes": sum(len(c or b"") for c in stderr_chunks),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", default="target/release/toolshape")
    parser.add_argument("--only", default="")
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("extra", nargs="*", help="extra `toolshape serve` arguments")
    args = parser.parse_args()
    if not os.path.exists(args.bin):
        sys.exit(f"{args.bin} does not exist: cargo build --release --locked -p toolshape-cli")
    if not os.path.exists("/proc/self/status"):
        sys.exit("this script reads /proc/<pid>/status: Linux only")
    only = {name for name in args.only.split(",") if name}
    work = tempfile.mkdtemp(prefix="measure-workspace-")
    try:
        size, rows = dense_csv(os.path.join(work, "dense.csv"))
        print(f"# dense.csv: {size} bytes, {rows} rows, 40 numeric columns", flush=True)
        scenarios = {}
        for n in (1, 8, 64):
            kinds = ["descriptive", "correlation"]
            scenarios[f"csv-{n}"] = [
                ("analyze_dataset", {"path": "dense.csv", "analysisType": kinds[i % 2]})
                for i in range(n)
            ]
        for name, glob in GLOBS.items():
            scenarios[name] = [("find", {"glob": glob})]
        for name, calls in scenarios.items():
            if only and name not in only:
                continue
            result = run(args.bin, work, args.extra, calls, args.timeout)
            print(json.dumps({"scenario": name, **result}), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
