#!/usr/bin/env python3
"""Drive a toolshape server's whole surface (resources, resource templates, prompts, completion,
a tool and a prompt that ask the user) with the official Python MCP SDK client.

Usage: surface.py --mode legacy|modern [--server PATH] [--via-proxy TOOLSHAPE]

The server is `conformance_server --stdio` (crates/toolshape-harness/src/bin/conformance_server.rs),
whose resources, template and prompts are those the official conformance suite reads.

legacy  `Client(..., mode="legacy")`: initialize, 2025-11-25; the server asks the user with
        `elicitation/create` requests over stdio.
modern  `Client(..., mode="auto")`: server/discover, stateless 2026-07-28; the server asks with
        `input_required` results, the SDK answers and retries.

--via-proxy runs the checks through `TOOLSHAPE proxy` in front of the same server, its upstream on
the other revision (legacy: the proxy speaks 2026-07-28 to the server; modern: 2025-11-25), so that
every question crosses revisions on its way.

Prints `python-surface-legacy: N passed, M failed` (or `-modern`, and `-proxy` after it) and exits 1
on any failure.
"""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path

import anyio
from mcp import Client, MCPError, StdioServerParameters
from mcp import types

sys.path.insert(0, str(Path(__file__).resolve().parent))
from client import Runner, expect, harness_main  # noqa: E402  (the same runner and checks)

INVALID_PARAMS = -32602
RESOURCE_NOT_FOUND = {"legacy": -32002, "modern": -32602}
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# The conformance server announces an update of it 100 ms after each subscription to it.
WATCHED = "test://watched-resource"


def answering(action: str, content: dict | None, seen: list):
    """An elicitation callback that records each question and answers `action` with `content`."""

    async def callback(_context, params):
        seen.append(params)
        return types.ElicitResult(action=action, content=content)

    return callback


async def run(r: Runner, mode: str, server: str, proxy: str | None = None) -> None:
    params = StdioServerParameters(command=server, args=["--stdio"])
    if proxy is not None:
        upstream = "2025-11-25" if mode == "modern" else "2026-07-28"
        params = StdioServerParameters(
            command=proxy, args=["proxy", "--quiet-server", "--protocol", upstream, "--", server, "--stdio"])
    connect_mode = "auto" if mode == "modern" else "legacy"
    questions: list = []
    answers = {"username": "ada", "email": "ada@example.com"}
    updates: list[str] = []
    tool_changes: list[bool] = []

    async def on_message(message) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            updates.append(message.params.uri)
        if isinstance(message, types.ToolListChangedNotification):
            tool_changes.append(True)

    async with Client(params, mode=connect_mode, read_timeout_seconds=30, message_handler=on_message,
                      elicitation_callback=answering("accept", answers, questions)) as client:

        async def era():
            want = "2026-07-28" if mode == "modern" else "2025-11-25"
            expect(client.protocol_version == want, f"protocol_version {client.protocol_version!r}")
            caps = client.server_capabilities
            expect(caps.resources is not None and caps.prompts is not None, f"capabilities {caps!r}")
            expect(caps.completions is not None, f"no completions capability: {caps!r}")

        await r.check(f"negotiated {mode} era; resources, prompts and completions offered", era)

        async def resources():
            listed = await client.list_resources()
            uris = {str(res.uri) for res in listed.resources}
            want = {"test://static-text", "test://static-binary", "test://watched-resource"}
            expect(want <= uris, f"resources {sorted(uris)}")
            text = next(res for res in listed.resources if str(res.uri) == "test://static-text")
            expect(text.mime_type == "text/plain", f"mimeType {text.mime_type!r}")

        await r.check("resources/list: the three fixed resources with their MIME types", resources)

        async def templates():
            listed = await client.list_resource_templates()
            names = [t.uri_template for t in listed.resource_templates]
            expect(names == ["test://template/{id}/data"], f"templates {names}")

        await r.check("resources/templates/list: the RFC 6570 template", templates)

        async def read_text():
            read = await client.read_resource("test://static-text")
            expect(len(read.contents) == 1, f"contents {read.contents!r}")
            got = read.contents[0]
            expect(getattr(got, "text", None) == "This is the content of the static text resource.", f"text {got!r}")
            expect(str(got.uri) == "test://static-text", f"uri {got.uri!r}")

        await r.check("resources/read: text contents", read_text)

        async def read_blob():
            read = await client.read_resource("test://static-binary")
            got = read.contents[0]
            blob = getattr(got, "blob", None)
            expect(blob is not None, f"no blob: {got!r}")
            expect(base64.b64decode(blob).startswith(PNG_SIGNATURE), "the blob is not the PNG")
            expect(got.mime_type == "image/png", f"mimeType {got.mime_type!r}")

        await r.check("resources/read: a base64 blob (a PNG)", read_blob)

        async def read_template():
            read = await client.read_resource("test://template/123/data")
            got = read.contents[0]
            data = json.loads(got.text)
            expect(data == {"id": "123", "templateTest": True, "data": "Data for ID: 123"}, f"data {data!r}")
            expect(str(got.uri) == "test://template/123/data", f"uri {got.uri!r}")

        await r.check("resources/read through the template: its variable bound", read_template)

        async def read_missing():
            try:
                await client.read_resource("test://no-such-resource")
            except MCPError as e:
                expect(e.code == RESOURCE_NOT_FOUND[mode], f"code {e.code}: {e.message}")
                return
            raise AssertionError("no error for a missing resource")

        await r.check(f"resources/read of a missing resource -> MCPError {RESOURCE_NOT_FOUND[mode]}", read_missing)

        async def prompts():
            listed = await client.list_prompts()
            names = {p.name for p in listed.prompts}
            want = {"test_simple_prompt", "test_prompt_with_arguments", "test_prompt_with_embedded_resource",
                    "test_prompt_with_image", "test_input_required_result_prompt"}
            expect(want <= names, f"prompts {sorted(names)}")
            with_args = next(p for p in listed.prompts if p.name == "test_prompt_with_arguments")
            args = {(a.name, a.required) for a in with_args.arguments or []}
            expect(args == {("arg1", True), ("arg2", True)}, f"arguments {args}")

        await r.check("prompts/list: the five prompts, arguments declared", prompts)

        async def prompt_args():
            got = await client.get_prompt("test_prompt_with_arguments", {"arg1": "left", "arg2": "right"})
            texts = [m.content.text for m in got.messages if m.content.type == "text"]
            expect(texts == ["Prompt with arguments: arg1='left', arg2='right'"], f"messages {texts}")
            expect(got.messages[0].role == "user", f"role {got.messages[0].role!r}")

        await r.check("prompts/get with arguments", prompt_args)

        async def prompt_embedded():
            got = await client.get_prompt("test_prompt_with_embedded_resource", {"resourceUri": "test://static-text"})
            first = got.messages[0].content
            expect(first.type == "resource", f"first block {first!r}")
            expect(str(first.resource.uri) == "test://static-text", f"embedded uri {first.resource.uri!r}")
            image = await client.get_prompt("test_prompt_with_image")
            block = image.messages[0].content
            expect(block.type == "image" and base64.b64decode(block.data).startswith(PNG_SIGNATURE), "no PNG image")

        await r.check("prompts/get: an embedded resource and an image", prompt_embedded)

        async def missing_prompt():
            try:
                await client.get_prompt("no_such_prompt")
            except MCPError as e:
                expect(e.code == INVALID_PARAMS, f"code {e.code}: {e.message}")
                return
            raise AssertionError("no error for an unknown prompt")

        await r.check("prompts/get of an unknown prompt -> MCPError -32602", missing_prompt)

        async def complete():
            got = await client.complete(types.PromptReference(type="ref/prompt", name="test_prompt_with_arguments"),
                                        {"name": "arg1", "value": "par"})
            expect(got.completion.values == ["paris", "park", "party"], f"values {got.completion.values}")
            got = await client.complete(
                types.ResourceTemplateReference(type="ref/resource", uri="test://template/{id}/data"),
                {"name": "id", "value": "4"})
            expect(got.completion.values == ["456"], f"values {got.completion.values}")

        await r.check("completion/complete: a prompt argument and a template variable", complete)

        async def elicit():
            before = len(questions)
            res = await client.call_tool("test_elicitation", {"message": "Who are you?"})
            expect(not res.is_error, f"isError: {res.content!r}")
            text = (res.structured_content or {}).get("text", "")
            expect("action=accept" in text and '"username":"ada"' in text, f"structured {res.structured_content!r}")
            expect(len(questions) == before + 1, f"{len(questions) - before} questions")
            question = questions[-1]
            expect(question.message == "Who are you?", f"message {question.message!r}")
            props = question.requested_schema["properties"]
            expect(set(props) == {"username", "email"}, f"requested schema {question.requested_schema!r}")

        await r.check("a tool that elicits: the callback's answer reaches the tool", elicit)

        async def elicit_defaults():
            res = await client.call_tool("test_elicitation_sep1034_defaults", {})
            expect(not res.is_error, f"isError: {res.content!r}")
            props = questions[-1].requested_schema["properties"]
            expect(props["age"].get("default") == 30 and props["status"].get("default") == "active",
                   f"defaults {props!r}")

        await r.check("SEP-1034 defaults reach the client in the requested schema", elicit_defaults)

        async def prompt_asks():
            res = await client.get_prompt("test_input_required_result_prompt")
            text = res.messages[0].content.text
            # The callback answers every question with the same content; this form wants `context`.
            expect(text == "Prompt with context: ", f"text {text!r}")
            expect(questions[-1].message == "What context should the prompt use?", f"{questions[-1].message!r}")

        await r.check("a prompt that asks the user: asked, answered, rendered", prompt_asks)

        if mode == "legacy":
            async def subscribe():
                await client.subscribe_resource(WATCHED)
                with anyio.move_on_after(5):
                    while WATCHED not in updates:
                        await anyio.sleep(0.05)
                expect(updates == [WATCHED], f"resources/updated received: {updates!r}")

            await r.check("resources/subscribe, then notifications/resources/updated", subscribe)

            async def tools_change():
                res = await client.call_tool("test_trigger_tool_change", {})
                expect(not res.is_error, f"isError: {res.content!r}")
                with anyio.move_on_after(10):
                    while not tool_changes:
                        await anyio.sleep(0.05)
                expect(tool_changes, "no notifications/tools/list_changed")
                names = [tool.name for tool in (await client.list_tools()).tools]
                expect("test_dynamic_tool" in names, f"tools {names!r}")

            await r.check("a tool added: notifications/tools/list_changed, then listed", tools_change)
        else:
            async def listen():
                async with client.listen(resource_subscriptions=[WATCHED]) as sub:
                    honored = list(sub.honored.resource_subscriptions or [])
                    expect(honored == [WATCHED], f"acknowledged {sub.honored!r}")
                    with anyio.fail_after(5):
                        event = await sub.__anext__()
                    expect(getattr(event, "uri", None) == WATCHED, f"event {event!r}")

            await r.check("subscriptions/listen: acknowledged, then notifications/resources/updated", listen)

            async def tools_change():
                async with client.listen(tools_list_changed=True) as sub:
                    expect(sub.honored.tools_list_changed, f"acknowledged {sub.honored!r}")
                    res = await client.call_tool("test_trigger_tool_change", {})
                    expect(not res.is_error, f"isError: {res.content!r}")
                    with anyio.fail_after(10):
                        event = await sub.__anext__()
                    expect(type(event).__name__ == "ToolsListChanged", f"event {event!r}")
                names = [tool.name for tool in (await client.list_tools()).tools]
                expect("test_dynamic_tool" in names, f"tools {names!r}")

            await r.check("subscriptions/listen: a tool added brings tools/list_changed, then listed", tools_change)

    declined: list = []
    async with Client(params, mode=connect_mode, read_timeout_seconds=30,
                      elicitation_callback=answering("decline", None, declined)) as client:

        async def decline():
            res = await client.call_tool("test_elicitation", {"message": "Who are you?"})
            expect(not res.is_error, f"isError: {res.content!r}")
            text = (res.structured_content or {}).get("text", "")
            expect("action=decline" in text, f"structured {res.structured_content!r}")
            expect(len(declined) == 1, f"{len(declined)} questions")

        await r.check("a declined elicitation reaches the tool as declined", decline)


def main() -> int:
    return harness_main(__doc__, "surface", "conformance_server", run)


if __name__ == "__main__":
    sys.exit(main())
