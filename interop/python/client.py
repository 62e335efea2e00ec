#!/usr/bin/env python3
"""Drive `toolshape serve` with the official Python MCP SDK client (`mcp`, see requirements.txt).

Usage: client.py --mode legacy|modern [--server PATH] [--page-size N] [--via-proxy]

legacy  `Client(..., mode="legacy")`: the initialize handshake; the SDK proposes and gets 2025-11-25.
modern  `Client(..., mode="auto")`: the SDK probes `server/discover` and, since toolshape lists
        2026-07-28, adopts the stateless 2026-07-28 era (no initialize). One extra check also
        connects with the version pin `mode="2026-07-28"` (no probe on the wire).

The client validates `structuredContent` against the listed `outputSchema` itself
(`ClientSession.validate_tool_result`, called from `ClientSession.call_tool` for every result that
is not `isError`); this script spies on that path to prove it ran for every tool that has an output
schema, and checks once that a schema the result cannot satisfy makes it raise.

--via-proxy runs the same checks through `toolshape proxy` in front of `toolshape serve` (the
gateway must change nothing a client sees but the server's name).

Prints `python-legacy: N passed, M failed` (or `python-modern: ...`, with `-proxy` appended through
the proxy) and exits 1 on any failure.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import statistics
import sys
import tempfile
import traceback
from pathlib import Path
from typing import Any

from mcp import Client, MCPError, StdioServerParameters

HERE = Path(__file__).resolve().parent
INTEROP = HERE.parent
WRAP_KEY = "dev.toolshape/wrappedOutput"
TOOLS = {
    "list_directory",
    "file_info",
    "read_text",
    "count_lines",
    "find",
    "analyze_project",
    "analyze_dataset",
}
WRAPPED = {"list_directory", "count_lines"}  # non-object outputs
INVALID_PARAMS = -32602


# ----------------------------------------------------------------------------- fixture


def make_fixture(root: Path) -> dict[str, str]:
    files: dict[str, str] = json.loads((INTEROP / "fixture.json").read_text("utf-8"))["files"]
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
    return files


def editor_lines(text: str) -> int:
    """Lines as an editor counts them: newlines, plus one for an unterminated last line."""
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


MISSING = {"", "na", "n/a", "nan", "null", "none"}


def csv_expectations(text: str) -> dict[str, Any]:
    rows = [line.split(",") for line in text.splitlines()]
    header, data = rows[0], rows[1:]
    columns: dict[str, list[float | None]] = {}
    numeric: list[str] = []
    missing = 0
    for i, name in enumerate(header):
        cells = [row[i] if i < len(row) else "" for row in data]
        missing += sum(1 for c in cells if c.strip().lower() in MISSING)
        values: list[float | None] = []
        ok = True
        for c in cells:
            if c.strip().lower() in MISSING:
                values.append(None)
                continue
            try:
                values.append(float(c))
            except ValueError:
                ok = False
        if ok:
            numeric.append(name)
            columns[name] = values
    stats = {}
    for name in numeric:
        vals = [v for v in columns[name] if v is not None]
        stats[name] = {
            "count": len(vals),
            "mean": statistics.fmean(vals),
            "median": statistics.median(vals),
            "standardDeviation": statistics.stdev(vals) if len(vals) > 1 else 0.0,
            "min": min(vals),
            "max": max(vals),
        }
    correlations = []
    for a in range(len(numeric)):
        for b in range(a + 1, len(numeric)):
            x, y = columns[numeric[a]], columns[numeric[b]]
            pairs = [(p, q) for p, q in zip(x, y) if p is not None and q is not None]
            if len(pairs) < 2:
                continue
            xs, ys = [p for p, _ in pairs], [q for _, q in pairs]
            if len(set(xs)) < 2 or len(set(ys)) < 2:
                continue
            correlations.append((numeric[a], numeric[b], statistics.correlation(xs, ys)))
    return {
        "summary": {"totalRows": len(data), "totalColumns": len(header), "missingValues": missing},
        "statistics": stats,
        "correlations": correlations,
    }


# ----------------------------------------------------------------------------- checks


class Failed(AssertionError):
    pass


def expect(cond: bool, what: str) -> None:
    if not cond:
        raise Failed(what)


def close(a: Any, b: float, what: str) -> None:
    expect(isinstance(a, (int, float)) and math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9), f"{what}: got {a!r}, want {b!r}")


class Runner:
    def __init__(self, label: str) -> None:
        self.label = label
        self.passed = 0
        self.failed = 0

    async def check(self, name: str, fn) -> Any:
        try:
            out = await fn()
        except Exception as e:  # noqa: BLE001 - every failure is reported, not raised
            self.failed += 1
            detail = str(e) if isinstance(e, Failed) else "".join(traceback.format_exception_only(e)).strip()
            print(f"  FAIL {name}: {detail}", file=sys.stderr)
            return None
        self.passed += 1
        print(f"  ok   {name}", file=sys.stderr)
        return out


SERVER_NAME = {False: "toolshape", True: "toolshape-proxy"}


async def run(r: Runner, mode: str, server: str, page_size: int, via_proxy: bool = False) -> None:
    modern = mode == "modern"
    with tempfile.TemporaryDirectory(prefix="toolshape-interop-py-") as tmp:
        root = Path(tmp)
        files = make_fixture(root)
        serve = ["serve", "--root", str(root), "--page-size", str(page_size)]
        if via_proxy:
            serve = ["proxy", "--page-size", str(page_size), "--", server, "serve", "--root", str(root)]
        params = StdioServerParameters(command=server, args=serve)
        async with Client(params, mode="auto" if modern else "legacy", read_timeout_seconds=30) as client:
            await exercise(r, client, root, files, modern, SERVER_NAME[via_proxy])
        if modern:
            # The version pin adopts 2026-07-28 without a probe; every request still carries the _meta envelope.
            async def pinned():
                async with Client(params, mode="2026-07-28", read_timeout_seconds=30) as c:
                    expect(c.protocol_version == "2026-07-28", f"pinned protocol_version {c.protocol_version!r}")
                    names = await list_all(c)
                    expect(set(names) == TOOLS, f"pinned listing {sorted(names)}")
                    res = await c.call_tool("count_lines", {"path": "src/lib.rs"})
                    expect(not res.is_error and res.structured_content == editor_lines(files["src/lib.rs"]),
                           f"pinned count_lines {res.structured_content!r}")
            await r.check("pinned mode='2026-07-28' connection lists and calls", pinned)


async def list_all(client: Client, pages: list | None = None) -> list[str]:
    names: list[str] = []
    cursor = None
    while True:
        page = await client.list_tools(cursor=cursor)
        if pages is not None:
            pages.append(page)
        names += [t.name for t in page.tools]
        cursor = page.next_cursor
        if cursor is None:
            return names
        expect(len(names) <= 100, "pagination does not end")


async def exercise(r: Runner, client: Client, root: Path, files: dict[str, str], modern: bool, server_name: str) -> None:
    session = client.session

    async def era():
        if modern:
            expect(client.protocol_version == "2026-07-28", f"protocol_version {client.protocol_version!r}")
            expect(session.discover_result is not None, "no DiscoverResult: server/discover was not used")
            expect(session.initialize_result is None, "an initialize handshake happened")
            expect("2026-07-28" in session.discover_result.supported_versions, "2026-07-28 not in supportedVersions")
        else:
            expect(client.protocol_version == "2025-11-25", f"protocol_version {client.protocol_version!r}")
            expect(session.initialize_result is not None, "no InitializeResult")
        expect(client.server_info is not None and client.server_info.name == server_name, f"server_info {client.server_info!r}")
        expect(client.server_capabilities.tools is not None, "no tools capability")

    await r.check(f"negotiated {'2026-07-28 via server/discover' if modern else '2025-11-25 via initialize'}", era)

    # Spy on the SDK's own output-schema validation: `validate_tool_result` asks
    # `_output_schema_validator(name, schema)` for the compiled jsonschema validator on every check.
    validated: dict[str, int] = {}
    real_validator = session._output_schema_validator

    def spying_validator(name, schema):
        validated[name] = validated.get(name, 0) + 1
        return real_validator(name, schema)

    session._output_schema_validator = spying_validator  # type: ignore[method-assign]

    pages: list = []
    tools: dict[str, Any] = {}

    async def listing():
        names = await list_all(client, pages)
        expect(len(pages) >= 3, f"expected >= 3 pages with --page-size 3, got {len(pages)}")
        expect(all(len(p.tools) <= 3 for p in pages), "a page holds more than 3 tools")
        expect(sorted(names) == sorted(TOOLS), f"tools listed: {sorted(names)}")
        for p in pages:
            for t in p.tools:
                tools[t.name] = t
        # Every page was absorbed, so the session knows every output schema (read_text has none).
        known = session._tool_output_schemas
        expect(set(known) == TOOLS, f"session absorbed schemas for {sorted(known)}")
        expect(known["read_text"] is None, "read_text has an output schema")

    await r.check("tools/list paginated (page size 3) lists all 7 tools", listing)

    async def schemas():
        for name, t in tools.items():
            expect(t.input_schema.get("type") == "object", f"{name}: inputSchema type {t.input_schema.get('type')!r}")
            if name == "read_text":
                expect(t.output_schema is None, "read_text: outputSchema present")
                continue
            s = t.output_schema
            expect(isinstance(s, dict), f"{name}: no outputSchema")
            meta = t.meta or {}
            if modern:
                want = {"list_directory": "array", "count_lines": "integer"}.get(name, "object")
                expect(s.get("type") == want, f"{name}: outputSchema type {s.get('type')!r}, want {want!r}")
                expect(WRAP_KEY not in meta, f"{name}: wrap marker on a 2026-07-28 listing")
            else:
                expect(s.get("type") == "object", f"{name}: outputSchema type {s.get('type')!r} (must be object before 2026)")
                if name in WRAPPED:
                    expect(meta.get(WRAP_KEY) == "result", f"{name}: _meta {meta!r}")
                    expect(s.get("required") == ["result"], f"{name}: wrapped schema {s!r}")

    await r.check("tool schemas have the era's shape", schemas)

    def unwrap(name: str, res) -> Any:
        """The tool's value: the structured content, unwrapped from {"result": v} on legacy."""
        sc = res.structured_content
        meta = res.meta or {}
        if name in WRAPPED and not modern:
            expect(meta.get(WRAP_KEY) == "result", f"{name}: result _meta {meta!r}")
            expect(isinstance(sc, dict) and set(sc) == {"result"}, f"{name}: not wrapped: {sc!r}")
            return sc["result"]
        expect(WRAP_KEY not in meta, f"{name}: unexpected wrap marker {meta!r}")
        return sc

    async def call(name: str, args: dict) -> Any:
        res = await client.call_tool(name, args)
        expect(not res.is_error, f"{name}{json.dumps(args)} isError: {[getattr(c, 'text', c) for c in res.content]}")
        if name == "read_text":
            expect(res.structured_content is None, "read_text returned structuredContent")
            return res
        # One text block holding the same value serialized as JSON.
        texts = [c.text for c in res.content if c.type == "text"]
        expect(len(texts) == 1, f"{name}: {len(texts)} text blocks")
        expect(json.loads(texts[0]) == res.structured_content, f"{name}: text block differs from structuredContent")
        return unwrap(name, res)

    def entry_kind(p: Path) -> str:
        return "symlink" if p.is_symlink() else "dir" if p.is_dir() else "file" if p.is_file() else "other"

    async def t_list_directory():
        for rel in (".", "src"):
            v = await call("list_directory", {"path": rel})
            expect(isinstance(v, list), f"list_directory {rel}: not an array: {v!r}")
            want = sorted(os.listdir(root / rel))
            expect(sorted(e["name"] for e in v) == want, f"list_directory {rel}: names {[e['name'] for e in v]}, want {want}")
            for e in v:
                p = root / rel / e["name"]
                expect(e["kind"] == entry_kind(p), f"{e['name']}: kind {e['kind']}")
                if e["kind"] == "file":
                    expect(e["size"] == p.stat().st_size, f"{e['name']}: size {e['size']}")

    async def t_file_info():
        v = await call("file_info", {"path": "src/lib.rs"})
        text = files["src/lib.rs"]
        expect(v["path"] == "src/lib.rs" and v["kind"] == "file" and v["isSymlink"] is False, f"file_info {v!r}")
        expect(v["size"] == len(text.encode()), f"size {v['size']}")
        expect(v["binary"] is False and v["directory"] is None, f"binary/directory {v!r}")
        expect(v["text"] == {"lines": editor_lines(text), "isUtf8": True}, f"text {v['text']!r}")
        d = await call("file_info", {"path": "src"})
        expect(d["kind"] == "dir" and d["text"] is None, f"file_info src {d!r}")
        expect(d["directory"]["entries"] == 3 and d["directory"]["files"] == 2 and d["directory"]["dirs"] == 1,
               f"directory summary {d['directory']!r}")

    async def t_read_text():
        res = await call("read_text", {"path": "README.md"})
        texts = [c.text for c in res.content if c.type == "text"]
        expect(texts == [files["README.md"]], f"read_text README.md: {texts!r}")
        res = await call("read_text", {"path": "README.md", "maxBytes": 8})
        text = "".join(c.text for c in res.content if c.type == "text")
        expect(text.startswith(files["README.md"][:8]), f"read_text maxBytes=8: {text!r}")

    async def t_count_lines():
        for rel in ("src/main.rs", "src/lib.rs", "data/measurements.csv"):
            v = await call("count_lines", {"path": rel})
            want = editor_lines(files[rel])
            expect(isinstance(v, int) and not isinstance(v, bool) and v == want, f"count_lines {rel}: {v!r}, want {want}")

    async def t_find():
        v = await call("find", {"glob": "**/*.rs"})
        want = sorted(k for k in files if k.endswith(".rs"))
        expect(v["truncated"] is False, "find truncated")
        expect(sorted(m["path"] for m in v["matches"]) == want, f"find **/*.rs: {v['matches']!r}")
        for m in v["matches"]:
            expect(m["kind"] == "file" and m["size"] == len(files[m["path"]].encode()), f"match {m!r}")
        v = await call("find", {"path": "Cargo.toml"})
        expect([m["path"] for m in v["matches"]] == ["Cargo.toml"] and v["matches"][0]["kind"] == "file", f"find path: {v!r}")
        v = await call("find", {"path": "no/such/file"})
        expect(v == {"matches": [], "truncated": False}, f"find missing path: {v!r}")

    async def t_analyze_project():
        for args in ({}, {"path": "."}):
            v = await call("analyze_project", args)
            p = v["project"]
            expect(p["name"] == "interop-fixture" and p.get("version") == "0.3.1", f"name/version {p!r}")
            expect(p["dependencies"]["direct"] == ["anyhow", "serde"], f"dependencies {p['dependencies']!r}")
            code = sum(editor_lines(t) for k, t in files.items() if k.endswith((".rs", ".py")))
            expect(p["metrics"]["linesOfCode"] == code, f"linesOfCode {p['metrics']!r}, want {code}")
            langs = {lang["name"]: lang for lang in p["languages"]}
            expect(langs.get("Rust", {}).get("fileCount") == 3, f"Rust {langs.get('Rust')!r}")
            expect(langs.get("Python", {}).get("fileCount") == 1, f"Python {langs.get('Python')!r}")
            expect(abs(sum(lang["percentage"] for lang in p["languages"]) - 100) < 0.1, "percentages do not add up to 100")

    want_csv = csv_expectations(files["data/measurements.csv"])

    async def t_analyze_dataset():
        v = await call("analyze_dataset", {"path": "data/measurements.csv", "analysisType": "descriptive"})
        expect(v["analysisType"] == "descriptive" and "correlations" not in v, f"descriptive keys {sorted(v)}")
        expect(v["summary"] == want_csv["summary"], f"summary {v['summary']!r}, want {want_csv['summary']!r}")
        expect(set(v["statistics"]) == set(want_csv["statistics"]), f"columns {sorted(v['statistics'])}")
        for col, want in want_csv["statistics"].items():
            got = v["statistics"][col]
            expect(got["count"] == want["count"], f"{col}.count {got['count']}")
            for k in ("mean", "median", "standardDeviation", "min", "max"):
                close(got[k], want[k], f"{col}.{k}")
        v = await call("analyze_dataset", {"path": "data/measurements.csv", "analysisType": "correlation"})
        expect(v["analysisType"] == "correlation" and "statistics" not in v, f"correlation keys {sorted(v)}")
        got = [(c["variable1"], c["variable2"]) for c in v["correlations"]]
        expect(got == [(a, b) for a, b, _ in want_csv["correlations"]], f"pairs {got}")
        for c, (_, _, coef) in zip(v["correlations"], want_csv["correlations"]):
            close(c["coefficient"], coef, f"r({c['variable1']},{c['variable2']})")

    for name, fn in [
        ("list_directory", t_list_directory),
        ("file_info", t_file_info),
        ("read_text", t_read_text),
        ("count_lines", t_count_lines),
        ("find", t_find),
        ("analyze_project", t_analyze_project),
        ("analyze_dataset", t_analyze_dataset),
    ]:
        await r.check(f"call {name}: right shape and values", fn)

    async def t_validated():
        want = {n for n in TOOLS if n != "read_text"}
        expect(set(validated) == want, f"SDK output validation ran for {sorted(validated)}, want {sorted(want)}")

    await r.check("SDK validated structuredContent of every tool with an outputSchema", t_validated)

    async def t_validation_bites():
        # Swap the cached schema of count_lines for one its result cannot satisfy: the SDK must raise.
        schemas = session._tool_output_schemas
        saved = schemas["count_lines"]
        schemas["count_lines"] = {"type": "object", "required": ["nope"]} if not modern else {"type": "string"}
        session._tool_output_validators.pop("count_lines", None)
        try:
            try:
                await client.call_tool("count_lines", {"path": "src/main.rs"})
            except RuntimeError as e:
                expect("Invalid structured content returned by tool count_lines" in str(e), f"message {e}")
            else:
                raise Failed("a result violating the outputSchema was accepted: validation is bypassed")
        finally:
            schemas["count_lines"] = saved
            session._tool_output_validators.pop("count_lines", None)

    await r.check("SDK rejects structuredContent that violates the schema (control)", t_validation_bites)

    invalid = [
        ("list_directory", {}),
        ("file_info", {"path": 5}),
        ("read_text", {"path": "README.md", "maxBytes": 0}),
        ("count_lines", {"path": "src/main.rs", "extra": True}),
        ("find", {"path": "Cargo.toml", "glob": "*.toml"}),
        ("analyze_project", {"path": 7}),
        ("analyze_dataset", {"path": "data/measurements.csv", "analysisType": "median"}),
    ]
    for name, args in invalid:
        async def t_invalid(name=name, args=args):
            res = await client.call_tool(name, args)
            expect(res.is_error is True, f"isError {res.is_error!r}: {res.content!r}")
            texts = [c.text for c in res.content if c.type == "text"]
            expect(texts and texts[0], "no error text")

        await r.check(f"call {name} {json.dumps(args)} -> isError", t_invalid)

    async def t_tool_error():
        for name, args in (("count_lines", {"path": "missing.txt"}), ("read_text", {"path": "../outside"})):
            res = await client.call_tool(name, args)
            expect(res.is_error is True, f"{name}{json.dumps(args)}: isError {res.is_error!r}")

    await r.check("tool-level failures (missing file, path outside root) -> isError", t_tool_error)

    async def t_unknown():
        try:
            res = await client.call_tool("no_such_tool", {})
        except MCPError as e:
            expect(e.code == INVALID_PARAMS, f"code {e.code}: {e.message}")
            return
        raise Failed(f"no error for an unknown tool: {res!r}")

    await r.check("unknown tool -> MCPError -32602", t_unknown)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mode", choices=["legacy", "modern"], required=True)
    ap.add_argument("--server", default=os.environ.get("TOOLSHAPE_BIN", str(INTEROP.parent / "target/debug/toolshape")))
    ap.add_argument("--page-size", type=int, default=3)
    ap.add_argument("--via-proxy", action="store_true")
    args = ap.parse_args()
    label = f"python-{args.mode}" + ("-proxy" if args.via_proxy else "")
    return report(label, lambda r: run(r, args.mode, args.server, args.page_size, args.via_proxy))


def harness_main(doc: str, kind: str, binary: str, run) -> int:
    """The command line of a harness-server script (surface, url, roots): `--mode legacy|modern`,
    `--server PATH` (default: the debug `binary`), `--via-proxy TOOLSHAPE`; runs
    `run(runner, mode, server, proxy)` and reports as `python-<kind>-<mode>[-proxy]`."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--mode", choices=["legacy", "modern"], required=True)
    ap.add_argument("--server", default=str(INTEROP.parent / "target/debug" / binary))
    ap.add_argument("--via-proxy", metavar="TOOLSHAPE", default=None)
    args = ap.parse_args()
    label = f"python-{kind}-{args.mode}" + ("-proxy" if args.via_proxy else "")
    return report(label, lambda r: run(r, args.mode, args.server, args.via_proxy))


def report(label: str, checks) -> int:
    """Runs `checks(runner)`, counts a crash as one failure, prints the summary, returns the exit code."""
    r = Runner(label)
    try:
        asyncio.run(checks(r))
    except BaseException:  # noqa: BLE001 - a crash (e.g. the connection failed) counts as one failure
        traceback.print_exc()
        r.failed += 1
    print(f"{label}: {r.passed} passed, {r.failed} failed", flush=True)
    return 0 if r.failed == 0 and r.passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
