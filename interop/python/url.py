#!/usr/bin/env python3
"""URL-mode elicitation beyond the question, with the official Python MCP SDK client.

Usage: url.py --mode legacy|modern [--server PATH] [--via-proxy TOOLSHAPE]

The server is `test_server --url-elicitation` (crates/toolshape-harness/src/url_elicitation.rs):
`visit_page` sends the user to a page and announces the visit complete 150 ms later; `sign_in`
needs the user on the account's sign-in page first (complete 150 ms after it is first asked for).

legacy  `Client(..., mode="legacy")`, 2025-11-25: `visit_page` asks with `elicitation/create` in
        URL mode (an `elicitationId`), and `notifications/elicitation/complete` names that id;
        `sign_in` fails with the -32042 URLElicitationRequiredError, its completion follows, and
        the retry succeeds.
modern  `Client(..., mode="auto")`, 2026-07-28: the page comes in an `input_required` round (no
        `elicitationId` there); the SDK's callback, back from the page, accepts, the SDK retries
        and the sign-in succeeds.

--via-proxy runs the checks through `TOOLSHAPE proxy --protocol 2025-11-25` in front of the same
server: the upstream's -32042 and completions reach a 2025-11-25 client with the upstream's ids,
and a 2026-07-28 client as rounds.

Prints `python-url-legacy: N passed, M failed` (or `-modern`, and `-proxy` after it) and exits 1 on
any failure.
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
from mcp import Client, MCPError, StdioServerParameters
from mcp import types

sys.path.insert(0, str(Path(__file__).resolve().parent))
from client import Failed, Runner, expect, harness_main  # noqa: E402  (the same runner and checks)

URL_ELICITATION_REQUIRED = -32042


async def completion(completed: list[str], elicitation_id: str) -> None:
    """Returns once `completed` holds the id; fails after 5 s."""
    with anyio.fail_after(5):
        while elicitation_id not in completed:
            await anyio.sleep(0.02)


async def run(r: Runner, mode: str, server: str, proxy: str | None = None) -> None:
    params = StdioServerParameters(command=server, args=["--url-elicitation"])
    if proxy is not None:
        params = StdioServerParameters(
            command=proxy,
            args=["proxy", "--quiet-server", "--protocol", "2025-11-25", "--", server, "--url-elicitation"])
    questions: list = []
    completed: list[str] = []
    # Back from the page after the server took the visit as complete (2026-07-28 retries then).
    visiting = 0.4 if mode == "modern" else 0.0

    async def on_message(message) -> None:
        if isinstance(message, types.ElicitCompleteNotification):
            completed.append(message.params.elicitation_id)

    async def on_elicit(_context, asked):
        questions.append(asked)
        await anyio.sleep(visiting)
        return types.ElicitResult(action="accept")

    connect_mode = "auto" if mode == "modern" else "legacy"
    async with Client(params, mode=connect_mode, read_timeout_seconds=30, message_handler=on_message,
                      elicitation_callback=on_elicit) as client:

        async def era():
            want = "2026-07-28" if mode == "modern" else "2025-11-25"
            expect(client.protocol_version == want, f"protocol_version {client.protocol_version!r}")

        await r.check(f"negotiated the {mode} era", era)

        async def visit():
            res = await client.call_tool("visit_page", {})
            expect(not res.is_error, f"isError: {res.content!r}")
            asked = questions[-1]
            expect(getattr(asked, "mode", None) == "url", f"asked {asked!r}")
            expect(str(asked.url).startswith("https://example.com/page"), f"url {asked.url!r}")
            visited = res.structured_content or {}
            expect(visited.get("action") == "accept", f"structured {visited!r}")
            if mode == "legacy":
                expect(asked.elicitation_id == visited.get("elicitationId"), f"{asked!r} / {visited!r}")
                await completion(completed, asked.elicitation_id)
            else:
                expect(getattr(asked, "elicitation_id", None) is None, f"an elicitationId on 2026-07-28: {asked!r}")

        await r.check("visit_page: a URL elicitation" + (" with its id, then its completion"
                                                         if mode == "legacy" else " in a round"), visit)

        account = f"py-{mode}"

        if mode == "legacy":
            async def refused():
                try:
                    res = await client.call_tool("sign_in", {"account": account})
                except MCPError as e:
                    expect(e.code == URL_ELICITATION_REQUIRED, f"code {e.code}: {e.message}")
                    pages = (e.error.data or {}).get("elicitations", [])
                    expect(len(pages) == 1, f"data {e.error.data!r}")
                    expect(pages[0].get("elicitationId") == f"sign-in-{account}", f"page {pages[0]!r}")
                    expect(pages[0].get("url") == f"https://example.com/sign-in?account={account}", f"page {pages[0]!r}")
                    return
                raise Failed(f"no error: {res!r}")

            await r.check("sign_in: -32042 naming the sign-in page", refused)

            async def retried():
                await completion(completed, f"sign-in-{account}")
                res = await client.call_tool("sign_in", {"account": account})
                expect(not res.is_error and (res.structured_content or {}).get("signed_in") == account,
                       f"result {res!r}")

            await r.check("sign_in: its completion arrives, and the retry succeeds", retried)
        else:
            async def signed():
                res = await client.call_tool("sign_in", {"account": account})
                expect(not res.is_error and (res.structured_content or {}).get("signed_in") == account,
                       f"result {res!r}")
                pages = [q for q in questions if str(getattr(q, "url", "")).endswith(account)]
                expect(len(pages) >= 1, f"questions {questions!r}")

            await r.check("sign_in: the page asked in a round, the retry signed in", signed)


def main() -> int:
    return harness_main(__doc__, "url", "test_server", run)


if __name__ == "__main__":
    sys.exit(main())
