#!/usr/bin/env python3
"""Tools that ask the client (sampling, roots, elicitation, several questions at once), with the
official Python MCP SDK client.

Usage: asks.py --mode legacy|modern [--server PATH] [--via-proxy TOOLSHAPE]

The server is `test_server` (crates/toolshape-harness/src/asking.rs): `ask_model` asks the
client's model (`sampling/createMessage`), `ask_roots` its roots (`roots/list`), `ask_twice` the
user then the model, `ask_both` the user and the model at once, `ask_two` two forms at once; each
returns what it learnt. The client answers with its `sampling_callback`, `list_roots_callback` and
`elicitation_callback`, each recording the questions.

legacy  `Client(..., mode="legacy")`: initialize, 2025-11-25; the server asks with requests over
        stdio, in the middle of the call.
modern  `Client(..., mode="auto")`: server/discover, stateless 2026-07-28; the server asks in
        `input_required` results, the SDK answers and retries (`ask_twice`: two rounds).

--via-proxy runs the checks through `TOOLSHAPE proxy` in front of the same server, its upstream on
the other revision (legacy: the proxy speaks 2026-07-28 to the server; modern: 2025-11-25), so that
every question crosses revisions on its way.

Prints `python-asks-legacy: N passed, M failed` (or `-modern`, and `-proxy` after it) and exits 1 on
any failure.
"""

from __future__ import annotations

import sys
from pathlib import Path

from mcp import Client, StdioServerParameters
from mcp import types

sys.path.insert(0, str(Path(__file__).resolve().parent))
from client import Runner, expect, harness_main  # noqa: E402  (the same runner and checks)

MODEL = "interop-model-py"
ROOTS = ["file:///work/interop-asks-a", "file:///work/interop-asks-b"]
# Each form's answer, by the question asked.
NAMES = {"Who are you?": ("Ada", 36), "Who is A?": ("Ann", 41), "Who is B?": ("Bob", 52)}


async def run(r: Runner, mode: str, server: str, proxy: str | None = None) -> None:
    params = StdioServerParameters(command=server)
    if proxy is not None:
        upstream = "2025-11-25" if mode == "modern" else "2026-07-28"
        params = StdioServerParameters(
            command=proxy, args=["proxy", "--quiet-server", "--protocol", upstream, "--", server])
    connect_mode = "auto" if mode == "modern" else "legacy"
    asked: dict[str, list] = {"model": [], "roots": [], "user": []}

    async def on_sampling(_context, params: types.CreateMessageRequestParams):
        asked["model"].append(params)
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text="4"), model=MODEL,
            stop_reason="endTurn")

    async def on_roots(_context):
        asked["roots"].append(True)
        return types.ListRootsResult(roots=[types.Root(uri=uri) for uri in ROOTS])

    async def on_elicitation(_context, params):
        asked["user"].append(params.message)
        name, age = NAMES.get(params.message, ("?", 0))
        return types.ElicitResult(action="accept", content={"name": name, "age": age})

    async with Client(params, mode=connect_mode, read_timeout_seconds=30,
                      sampling_callback=on_sampling, list_roots_callback=on_roots,
                      elicitation_callback=on_elicitation) as client:
        want = "2026-07-28" if mode == "modern" else "2025-11-25"

        async def learnt(name: str) -> dict:
            before = {kind: len(seen) for kind, seen in asked.items()}
            res = await client.call_tool(name, {})
            expect(not res.is_error, f"{name}: isError {res.content!r}")
            got = (res.structured_content or {}).get("learnt")
            expect(isinstance(got, dict), f"{name}: structured {res.structured_content!r}")
            return got, {kind: len(seen) - before[kind] for kind, seen in asked.items()}

        async def era():
            expect(client.protocol_version == want, f"protocol_version {client.protocol_version!r}")

        async def model():
            got, counts = await learnt("ask_model")
            expect(got == {"model": MODEL, "text": "4"}, f"learnt {got!r}")
            expect(counts == {"model": 1, "roots": 0, "user": 0}, f"asked {counts}")
            question = asked["model"][-1]
            expect(question.max_tokens == 50, f"maxTokens {question.max_tokens}")
            text = question.messages[0].content
            expect(question.messages[0].role == "user" and text.text == "What is 2 + 2?", f"messages {question.messages!r}")

        async def roots():
            got, counts = await learnt("ask_roots")
            expect(got == {"roots": ROOTS}, f"learnt {got!r}")
            expect(counts == {"model": 0, "roots": 1, "user": 0}, f"asked {counts}")

        async def twice():
            got, counts = await learnt("ask_twice")
            expect(got["user"] == {"action": "accept", "name": "Ada", "age": 36}, f"user {got!r}")
            expect(got["model"] == {"model": MODEL, "text": "4"}, f"model {got!r}")
            expect(counts == {"model": 1, "roots": 0, "user": 1}, f"asked {counts}")

        async def both():
            got, counts = await learnt("ask_both")
            expect(got["user"]["name"] == "Ada" and got["model"]["text"] == "4", f"learnt {got!r}")
            expect(counts == {"model": 1, "roots": 0, "user": 1}, f"asked {counts}")

        async def two():
            before = len(asked["user"])
            got, counts = await learnt("ask_two")
            expect(got == {"a": "Ann", "b": "Bob"}, f"learnt {got!r}")
            expect(sorted(asked["user"][before:]) == ["Who is A?", "Who is B?"], f"asked {asked['user'][before:]}")
            expect(counts["user"] == 2, f"asked {counts}")

        await r.check(f"{want} negotiated", era)
        await r.check("ask_model: the sampling callback's answer (model, text) reaches the tool", model)
        await r.check("ask_roots: the roots callback's roots reach the tool", roots)
        await r.check("ask_twice: the user, then the model, one question each", twice)
        await r.check("ask_both: the user and the model asked at once", both)
        await r.check("ask_two: two forms at once, each answered by its question", two)


if __name__ == "__main__":
    sys.exit(harness_main(__doc__, "asks", "test_server", run))
