#!/usr/bin/env python3
"""Roots asked outside any request, with the official Python MCP SDK client.

Usage: roots.py --mode legacy|modern [--server PATH] [--via-proxy TOOLSHAPE]

The server is `test_server --roots-at-start` (crates/toolshape-harness/src/early_roots.rs): as
soon as its client has finished the handshake it asks for the client's roots (`roots/list`,
outside any request, as the official filesystem server does), and its `roots_at_start` tool says
what it learnt.

legacy  `Client(..., mode="legacy")`, 2025-11-25, with a `list_roots_callback`: the server learns
        the client's roots (the callback runs once); the roots change, the client says so
        (`send_roots_list_changed`) and the server learns the new ones. Through the proxy (--via-proxy: `TOOLSHAPE
        proxy -- test_server --roots-at-start`, stdio its only front, so one client) the
        upstream's question, asked before the client even connected, waits for the client's
        handshake and reaches it, and so does the change; with `proxy --root DIR` the upstream learns the operator's
        folder instead and the client is never asked.
modern  `Client(..., mode="auto")`, 2026-07-28: a client that takes no request outside its own;
        through the proxy the upstream's question is refused at once, naming the revision.
        (Through the proxy the upstream speaks 2025-11-25: `proxy --protocol 2025-11-25`.)

Prints `python-roots-legacy: N passed, M failed` (or `-modern`, and `-proxy` after it) and exits 1
on any failure.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from mcp import Client, StdioServerParameters
from mcp import types

sys.path.insert(0, str(Path(__file__).resolve().parent))
from client import Runner, expect, harness_main  # noqa: E402  (the same runner and checks)

CLIENT_ROOT = "file:///work/interop-client"
LATER_ROOT = "file:///work/interop-later"


async def learnt(params: StdioServerParameters, connect_mode: str,
                 changed: str | None = None) -> tuple[list[types.CallToolResult], int]:
    """Calls `roots_at_start` over a fresh connection; with `changed`, the client's roots then
    become that URI, the client says so (`send_roots_list_changed`) and calls again for the second
    asking. The results, and how often the client was asked."""
    asked = 0
    roots = [CLIENT_ROOT]

    async def on_roots(_context):
        nonlocal asked
        asked += 1
        return types.ListRootsResult(roots=[types.Root(uri=uri) for uri in roots])

    async with Client(params, mode=connect_mode, read_timeout_seconds=60,
                      list_roots_callback=on_roots) as client:
        results = [await client.call_tool("roots_at_start", {})]
        if changed is not None:
            roots = [changed]
            await client.send_roots_list_changed()
            results.append(await client.call_tool("roots_at_start", {"asked": 2}))
        return results, asked


async def run(r: Runner, mode: str, server: str, proxy: str | None = None) -> None:
    connect_mode = "auto" if mode == "modern" else "legacy"
    upstream = [server, "--roots-at-start"]

    def proxied(*flags: str) -> StdioServerParameters:
        # The upstream on 2025-11-25: a handshake client (the proxy) is what it can ask.
        return StdioServerParameters(command=proxy, args=["proxy", "--quiet-server", "--protocol", "2025-11-25",
                                                          *flags, "--", *upstream])

    params = StdioServerParameters(command=server, args=upstream[1:]) if proxy is None else proxied()

    if mode == "legacy":
        async def client_roots():
            [first, second], asked = await learnt(params, connect_mode, changed=LATER_ROOT)
            expect(not first.is_error, f"isError: {first.content!r}")
            expect((first.structured_content or {}).get("roots") == [CLIENT_ROOT],
                   f"structured {first.structured_content!r}")
            expect(not second.is_error and (second.structured_content or {}).get("roots") == [LATER_ROOT],
                   f"after the change: {second!r}")
            expect(asked == 2, f"the client was asked {asked} times")

        await r.check("roots_at_start: the client's roots, asked outside any request, and again once "
                      "the client said they changed", client_roots)

        if proxy is not None:
            with tempfile.TemporaryDirectory() as folder:
                operator = Path(folder).resolve().as_uri()

                async def operator_roots():
                    [res], asked = await learnt(proxied("--root", folder), connect_mode)
                    expect(not res.is_error, f"isError: {res.content!r}")
                    expect((res.structured_content or {}).get("roots") == [operator],
                           f"structured {res.structured_content!r}")
                    expect(asked == 0, f"the client was asked {asked} times")

                await r.check("proxy --root: the operator's folder, the client never asked", operator_roots)
    else:
        async def refused():
            [res], asked = await learnt(params, connect_mode)
            expect(res.is_error, f"no error: {res.structured_content!r}")
            text = " ".join(getattr(block, "text", "") for block in res.content)
            expect("2026-07-28" in text or "outside its requests" in text, f"text {text!r}")
            expect(asked == 0, f"the client was asked {asked} times")

        await r.check("roots_at_start: a 2026-07-28 client is not asked, the error says why", refused)


def main() -> int:
    return harness_main(__doc__, "roots", "test_server", run)


if __name__ == "__main__":
    sys.exit(main())
