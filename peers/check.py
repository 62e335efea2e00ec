#!/usr/bin/env python3
"""Check that peer servers keep the tool contract of README.md (Python 3.9+, stdlib only).

    python3 peers/check.py [--installed DIR] [--timeout S] [PEER ...]
    python3 peers/check.py --name NAME [--legacy-only] [--timeout S] -- COMMAND [ARG ...]

PEER is rmcp, ts, ts2, py-mcp or py-fastmcp (default: all five), started the way
scripts/setup-peers.sh installs them under DIR (default: target/peers of the repository).
The second form checks any other stdio server, such as toolshape's peer_server example.

Each server is started as a child process and driven over its stdin/stdout once per era:
legacy (initialize at 2025-11-25 + notifications/initialized) and modern (2026-07-28:
server/discover, every request carrying the per-request _meta). A server that does not
speak 2026-07-28 (the TypeScript SDK 1.x, or --legacy-only) must answer server/discover
with -32601. In each era: tools/list names both tools with the contract's descriptions and
add's annotations, and every tools/call result has structuredContent equal to the contract's
value, numbers written exactly as the contract says (42, not 42.0), and a text block holding
the same value. Prints one line per server and era; exits 1 if any check failed.
"""

from __future__ import annotations

import argparse
import json
import queue
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any, Callable, Optional

PEERS_DIR = Path(__file__).resolve().parent
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
METHOD_NOT_FOUND = -32601
CONDITIONS = ["Sunny", "Partly cloudy", "Cloudy", "Rain"]
DIRECTIONS = ["N", "NE", "E", "SE", "S", "SW", "W", "NW"]
DESCRIPTIONS = {
    "add": "Add two integers",
    "get_weather_data": "Get current weather conditions and forecast data for a location",
}
ADD_ANNOTATIONS = {"readOnlyHint": True, "idempotentHint": True, "openWorldHint": False}
LOCATIONS = ["Paris", "São Paulo", "Tokyo", "94103"]
SERVER_NAMES = {
    "rmcp": "peer-rmcp",
    "ts": "peer-ts",
    "ts2": "peer-ts2",
    "py-mcp": "peer-py-mcp",
    "py-fastmcp": "peer-fastmcp",
}


class Num:
    """A JSON number kept as the text it was written with, so 42 and 42.0 differ."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Num) and other.text == self.text

    def __hash__(self) -> int:
        return hash(self.text)

    def __repr__(self) -> str:
        return self.text


def js_number(value: float) -> Num:
    """`value` written the way JavaScript writes it (valid for the contract's magnitudes)."""
    if float(value).is_integer():
        return Num(str(int(value)))
    return Num(repr(float(value)))


def parse_exact(text: str) -> Any:
    return json.loads(text, parse_int=Num, parse_float=Num)


def expected_weather(location: str, fahrenheit: bool) -> dict:
    """The contract's value, computed here independently of every peer."""
    h = sum(location.encode("utf-8"))

    def conv(t: float) -> Num:
        return js_number(t * 9 / 5 + 32 if fahrenheit else t)

    return {
        "current": {
            "temperature": conv((h % 40) - 5 + 0.5),
            "humidity": js_number(h % 100),
            "conditions": CONDITIONS[h % 4],
            "wind": {"speed": js_number(h % 30), "direction": DIRECTIONS[h % 8]},
        },
        "forecast": [
            {
                "date": f"2026-01-0{i + 1}",
                "high": conv((h + i) % 35),
                "low": conv((h + i) % 35 - 8),
                "conditions": CONDITIONS[(h + i) % 4],
            }
            for i in range(7)
        ],
        "location": {
            "city": location,
            "country": "US",
            "coordinates": {
                "latitude": js_number((h % 180) - 90 + 0.25),
                "longitude": js_number((h % 360) - 180 + 0.5),
            },
        },
    }


class CheckFailed(Exception):
    """One contract check did not hold."""


class Peer:
    """A server child process driven one request at a time."""

    def __init__(self, command: list, modern: bool, timeout: float) -> None:
        self.modern = modern
        self.timeout = timeout
        self.next_id = 0
        self.stderr = tempfile.TemporaryFile()
        try:
            self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=self.stderr)
        except OSError as error:
            raise CheckFailed(f"cannot start {command[0]}: {error}") from error
        self.lines: "queue.Queue[Optional[bytes]]" = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def send(self, message: dict) -> None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(json.dumps(message).encode() + b"\n")
            self.proc.stdin.flush()
        except BrokenPipeError as error:
            raise CheckFailed("the server closed its stdin") from error

    def request(self, method: str, params: Optional[dict] = None) -> dict:
        """Sends a request; returns the whole response (numbers as Num)."""
        self.next_id += 1
        params = dict(params or {})
        if self.modern:
            params["_meta"] = MODERN_META
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            try:
                line = self.lines.get(timeout=self.timeout)
            except queue.Empty:
                raise CheckFailed(f"{method}: no response within {self.timeout} s") from None
            if line is None:
                raise CheckFailed(f"{method}: the server closed its stdout")
            try:
                message = parse_exact(line.decode("utf-8"))
            except ValueError as error:
                raise CheckFailed(f"{method}: a line that is not JSON: {line[:200]!r}") from error
            if isinstance(message, dict) and "method" not in message and message.get("id") == Num(str(self.next_id)):
                return message

    def result(self, method: str, params: Optional[dict] = None) -> dict:
        response = self.request(method, params)
        result = response.get("result")
        if not isinstance(result, dict):
            raise CheckFailed(f"{method}: no result: {response}")
        return result

    def close(self) -> str:
        """Closes stdin, waits for the exit; returns what the server wrote to stderr."""
        try:
            if self.proc.stdin is not None:
                self.proc.stdin.close()
        except BrokenPipeError:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.stderr.seek(0)
        return self.stderr.read().decode("utf-8", "replace")


def expect(condition: bool, message: str) -> None:
    if not condition:
        raise CheckFailed(message)


def plain(value: Any) -> Any:
    """Num back to JSON text, for messages."""
    return json.loads(json.dumps(value, default=lambda n: json.loads(n.text)))


def check_call(peer: Peer, tool: str, arguments: dict, expected: Any) -> None:
    result = peer.result("tools/call", {"name": tool, "arguments": arguments})
    what = f"{tool} {json.dumps(arguments, ensure_ascii=False)}"
    expect(result.get("isError") is not True, f"{what}: isError: {plain(result)}")
    structured = result.get("structuredContent")
    expect(structured == expected,
           f"{what}: structuredContent {json.dumps(plain(structured))} != {json.dumps(plain(expected))}")
    texts = [block.get("text") for block in result.get("content", []) if block.get("type") == "text"]
    expect(len(texts) == 1, f"{what}: {len(texts)} text blocks, want 1")
    expect(parse_exact(texts[0]) == expected, f"{what}: the text block is not the structuredContent: {texts[0]!r}")


def check_tools(peer: Peer) -> None:
    tools = peer.result("tools/list").get("tools", [])
    by_name = {tool.get("name"): tool for tool in tools}
    expect(sorted(by_name) == sorted(DESCRIPTIONS), f"tools/list names {sorted(by_name)}")
    for name, description in DESCRIPTIONS.items():
        tool = by_name[name]
        expect(tool.get("description") == description, f"{name}: description {tool.get('description')!r}")
        schema = tool.get("outputSchema")
        expect(isinstance(schema, dict) and schema.get("type") == "object", f"{name}: outputSchema {schema!r}")
    annotations = by_name["add"].get("annotations") or {}
    for hint, value in ADD_ANNOTATIONS.items():
        expect(annotations.get(hint) is value, f"add: annotations {annotations}")


def drive(peer: Peer, modern: bool, speaks_modern: bool, server_name: Optional[str]) -> str:
    """One era's checks on a started server; returns a one-line summary or raises CheckFailed."""
    if modern:
        response = peer.request("server/discover")
        if not speaks_modern:
            code = (response.get("error") or {}).get("code")
            expect(code == Num(str(METHOD_NOT_FOUND)), f"server/discover: want -32601, got {plain(response)}")
            return "server/discover answered -32601 (legacy only), as expected"
        result = response.get("result")
        expect(isinstance(result, dict), f"server/discover: {plain(response)}")
        expect("2026-07-28" in result.get("supportedVersions", []), f"server/discover: {plain(result)}")
        info = (result.get("_meta") or {}).get("io.modelcontextprotocol/serverInfo") or {}
    else:
        result = peer.result("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                            "clientInfo": {"name": "peers/check.py", "version": "1.0.0"}})
        expect(result.get("protocolVersion") == "2025-11-25", f"initialize: {plain(result)}")
        info = result.get("serverInfo") or {}
        peer.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    if server_name is not None:
        expect(info.get("name") == server_name, f"server name {info.get('name')!r}, want {server_name!r}")
    check_tools(peer)
    check_call(peer, "add", {"a": 2, "b": 40}, {"sum": Num("42")})
    check_call(peer, "add", {"a": -5, "b": 3}, {"sum": Num("-2")})
    calls = 2
    for location in LOCATIONS:
        check_call(peer, "get_weather_data", {"location": location}, expected_weather(location, False))
        check_call(peer, "get_weather_data", {"location": location, "units": "fahrenheit"},
                   expected_weather(location, True))
        calls += 2
    return f"tools/list and {calls} calls match the contract"


def check_era(command: list, modern: bool, speaks_modern: bool, server_name: Optional[str],
              timeout: float) -> str:
    """Starts the server, runs one era's checks, stops it; shows its stderr when a check failed."""
    peer = Peer(command, modern, timeout)
    passed = False
    try:
        summary = drive(peer, modern, speaks_modern, server_name)
        passed = True
        return summary
    finally:
        stderr = peer.close()
        if not passed and stderr.strip():
            print(f"--- {command[-1]} stderr ---\n{stderr.rstrip()}\n---", file=sys.stderr)


def installed_command(peer: str, installed: Path) -> list:
    """How scripts/setup-peers.sh's install of `peer` is started."""
    commands: dict = {
        "rmcp": lambda: [str(installed / "rmcp-target/release/mcp-peer-rmcp")],
        "ts": lambda: ["node", str(installed / "ts/server.mjs")],
        "ts2": lambda: ["node", str(installed / "ts2/server.mjs")],
        "py-mcp": lambda: [str(installed / "py-mcp-venv/bin/python"), str(PEERS_DIR / "py-mcp/server.py")],
        "py-fastmcp": lambda: [str(installed / "py-fastmcp-venv/bin/python"), str(PEERS_DIR / "py-fastmcp/server.py")],
    }
    make: Callable[[], list] = commands[peer]
    return make()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--installed", type=Path, default=PEERS_DIR.parent / "target/peers",
                        help="where scripts/setup-peers.sh installed the peers")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for each response")
    parser.add_argument("--name", help="with -- COMMAND: a label for that server")
    parser.add_argument("--legacy-only", action="store_true", help="with -- COMMAND: it does not speak 2026-07-28")
    parser.add_argument("peers", nargs="*", help="rmcp ts ts2 py-mcp py-fastmcp, or -- COMMAND with --name")
    args = parser.parse_args()

    if args.name:
        if not args.peers:
            parser.error("--name needs -- COMMAND")
        targets = [(args.name, args.peers, not args.legacy_only, None)]
    else:
        unknown = [peer for peer in args.peers if peer not in SERVER_NAMES]
        if unknown:
            parser.error(f"unknown peer(s) {unknown}; known: {list(SERVER_NAMES)}")
        targets = [(peer, installed_command(peer, args.installed.resolve()), peer != "ts", SERVER_NAMES[peer])
                   for peer in (args.peers or list(SERVER_NAMES))]

    # The contract's spot values, so a slip in expected_weather cannot pass unnoticed.
    paris_f = expected_weather("Paris", True)
    assert plain(expected_weather("Paris", False)["current"]) == {
        "temperature": 26.5, "humidity": 11, "conditions": "Rain", "wind": {"speed": 1, "direction": "NW"}}
    assert paris_f["current"]["temperature"] == Num("79.7")
    assert (paris_f["forecast"][0]["high"], paris_f["forecast"][0]["low"]) == (Num("69.8"), Num("55.4"))

    failed = 0
    for name, command, speaks_modern, server_name in targets:
        for era, modern in (("legacy", False), ("modern", True)):
            try:
                summary = check_era(command, modern, speaks_modern, server_name, args.timeout)
                print(f"{name} {era}: ok, {summary}")
            except CheckFailed as error:
                failed += 1
                print(f"{name} {era}: FAILED: {error}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
