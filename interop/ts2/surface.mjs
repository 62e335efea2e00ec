#!/usr/bin/env node
// Drive a toolshape server's whole surface (resources, resource templates, prompts, completion,
// a tool and a prompt that ask the user, subscriptions) on 2026-07-28 with the official TypeScript
// MCP SDK 2.x client (@modelcontextprotocol/client, pinned in package.json) over stdio.
//
// Usage: node surface.mjs [--server PATH] [--via-proxy TOOLSHAPE]
//
// The server is `conformance_server --stdio` (crates/toolshape-harness/src/bin/conformance_server.rs),
// whose resources, template and prompts are those the official conformance suite reads. On
// 2026-07-28 the server asks the user in `input_required` results: the SDK answers each through
// the `elicitation/create` handler this client registers and retries the request with the
// answers. Subscriptions are `subscriptions/listen` streams. --via-proxy runs the checks through
// `TOOLSHAPE proxy --protocol 2025-11-25` in front of the same server: the proxy turns the
// upstream's `elicitation/create` requests into `input_required` rounds for this client, and its
// `resources/subscribe` and list changes into the listen stream's notifications.
//
// Prints `typescript2-surface[-proxy]: N passed, M failed` and exits 1 on any failure.

import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual, parseArgs } from 'node:util';

import { Client, ProtocolError } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

import { J, check, expect, report } from '../ts/checks.mjs';
import { answerFor, checkAsking, checkCompletion, expectError as expectErrorOf, isPng, runSurface } from '../ts/surface-checks.mjs';

const expectError = (promise, code, what) => expectErrorOf(promise, code, what, ProtocolError);

const HERE = dirname(fileURLToPath(import.meta.url));
const INTEROP = resolve(HERE, '..');
const MODERN = '2026-07-28';
// 2026-07-28: an unknown resource is -32602 (SEP-2164; -32002 before).
const INVALID_PARAMS = -32602;
const WATCHED = 'test://watched-resource';

const { values: opts } = parseArgs({
  options: {
    server: { type: 'string', default: join(INTEROP, '..', 'target', 'debug', 'conformance_server') },
    'via-proxy': { type: 'string' },
  },
});
const PROXY = opts['via-proxy'];
const LABEL = PROXY ? 'typescript2-surface-proxy' : 'typescript2-surface';
/** The command this client starts: the server, or the proxy in front of it. */
const COMMAND = PROXY
  ? { command: PROXY, args: ['proxy', '--quiet-server', '--protocol', '2025-11-25', '--', opts.server, '--stdio'] }
  : { command: opts.server, args: ['--stdio'] };

const within = (ms, promise, fallback) =>
  Promise.race([promise, new Promise((resolve) => setTimeout(() => resolve(fallback), ms))]);

/** A client whose elicitation handler records each question and answers `action` with `content`. */
async function connect(action, content, questions) {
  const transport = new StdioClientTransport({ ...COMMAND, stderr: 'inherit' });
  const client = new Client(
    { name: 'toolshape-interop-ts2-surface', version: '0.0.0' },
    { capabilities: { elicitation: {} }, versionNegotiation: { mode: 'auto' } },
  );
  client.setRequestHandler('elicitation/create', async (request) => {
    questions.push(request.params);
    return content === undefined ? { action } : { action, content: answerFor(request.params, content) };
  });
  await client.connect(transport);
  return client;
}

async function exercise(client, questions) {
  await check(`${MODERN} via server/discover: resources, prompts and completions offered`, async () => {
    expect(client.getNegotiatedProtocolVersion() === MODERN, `negotiated ${client.getNegotiatedProtocolVersion()}`);
    const caps = client.getServerCapabilities();
    expect(caps?.resources && caps?.prompts && caps?.completions, `capabilities ${J(caps)}`);
  });

  await check('resources/list: the three fixed resources with their MIME types', async () => {
    const { resources } = await client.listResources();
    const uris = new Set(resources.map((r) => r.uri));
    for (const uri of ['test://static-text', 'test://static-binary', WATCHED]) {
      expect(uris.has(uri), `missing ${uri} in ${J([...uris])}`);
    }
    expect(resources.find((r) => r.uri === 'test://static-binary').mimeType === 'image/png', 'mimeType of the PNG');
  });

  await check('resources/templates/list: the RFC 6570 template', async () => {
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(isDeepStrictEqual(resourceTemplates.map((t) => t.uriTemplate), ['test://template/{id}/data']), J(resourceTemplates));
  });

  await check('resources/read: text contents, a base64 blob (a PNG), the template\'s variable bound', async () => {
    const text = await client.readResource({ uri: 'test://static-text' });
    expect(text.contents.length === 1 && text.contents[0].text === 'This is the content of the static text resource.', J(text.contents));
    const blob = await client.readResource({ uri: 'test://static-binary' });
    expect(typeof blob.contents[0].blob === 'string' && isPng(blob.contents[0].blob), `not the PNG: ${J(blob.contents).slice(0, 200)}`);
    const bound = await client.readResource({ uri: 'test://template/123/data' });
    const data = JSON.parse(bound.contents[0].text);
    expect(isDeepStrictEqual(data, { id: '123', templateTest: true, data: 'Data for ID: 123' }), J(data));
  });

  await check(`resources/read of a missing resource -> ProtocolError ${INVALID_PARAMS}`, async () => {
    await expectError(client.readResource({ uri: 'test://no-such-resource' }), INVALID_PARAMS, 'missing resource');
  });

  await check('prompts/list and prompts/get with arguments, an embedded resource and an image', async () => {
    const { prompts } = await client.listPrompts();
    const args = prompts.find((p) => p.name === 'test_prompt_with_arguments')?.arguments.map((a) => [a.name, a.required]);
    expect(isDeepStrictEqual(args, [['arg1', true], ['arg2', true]]), J(args));
    const { messages } = await client.getPrompt({ name: 'test_prompt_with_arguments', arguments: { arg1: 'left', arg2: 'right' } });
    expect(messages[0].content.text === "Prompt with arguments: arg1='left', arg2='right'", J(messages));
    const embedded = await client.getPrompt({ name: 'test_prompt_with_embedded_resource', arguments: { resourceUri: 'test://static-text' } });
    const first = embedded.messages[0].content;
    expect(first.type === 'resource' && first.resource.uri === 'test://static-text', J(first));
    const image = await client.getPrompt({ name: 'test_prompt_with_image' });
    expect(image.messages[0].content.type === 'image' && isPng(image.messages[0].content.data), 'not the PNG');
  });

  await check('prompts/get of an unknown prompt -> ProtocolError -32602', async () => {
    await expectError(client.getPrompt({ name: 'no_such_prompt' }), INVALID_PARAMS, 'unknown prompt');
  });

  await checkCompletion(client);

  await checkAsking(client, questions);

  await check('subscriptions/listen to a resource: acknowledged, then notifications/resources/updated', async () => {
    // The conformance server announces an update 100 ms after each subscription to it.
    const updated = new Promise((resolve) => {
      client.setNotificationHandler('notifications/resources/updated', (n) => resolve(n.params.uri));
    });
    const subscription = await client.listen({ resourceSubscriptions: [WATCHED] });
    try {
      const uri = await within(5000, updated, '(none in 5 s)');
      expect(uri === WATCHED, `resources/updated for ${uri}`);
    } finally {
      await subscription.close();
    }
  });

  await check('subscriptions/listen to tool changes: a tool added brings tools/list_changed, then listed', async () => {
    // Only a change announced after the tool is called counts.
    let armed = false;
    const changed = new Promise((resolve) => {
      client.setNotificationHandler('notifications/tools/list_changed', () => armed && resolve(true));
    });
    const subscription = await client.listen({ toolsListChanged: true });
    try {
      armed = true;
      const result = await client.callTool({ name: 'test_trigger_tool_change', arguments: {} });
      expect(!result.isError, J(result));
      expect(await within(10000, changed, false), 'no notifications/tools/list_changed in 10 s');
      const { tools } = await client.listTools(undefined, { cacheMode: 'refresh' });
      expect(tools.some((tool) => tool.name === 'test_dynamic_tool'), J(tools.map((t) => t.name)));
    } finally {
      await subscription.close();
    }
  });
}

await report(LABEL, () => runSurface(connect, exercise));
