#!/usr/bin/env node
// Drive a toolshape server's whole surface (resources, resource templates, prompts, completion,
// a tool and a prompt that ask the user) with the official TypeScript MCP SDK client
// (@modelcontextprotocol/sdk, pinned in package.json): `Client` + `StdioClientTransport`.
//
// Usage: node surface.mjs [--server PATH] [--via-proxy TOOLSHAPE]
//
// --via-proxy runs the checks through `TOOLSHAPE proxy` in front of the same server, the proxy speaking
// 2026-07-28 to it (its questions come as `input_required` results, relayed to this client as
// requests).
//
// The server is `conformance_server --stdio` (crates/toolshape-harness/src/bin/conformance_server.rs),
// whose resources, template and prompts are those the official conformance suite reads. The TS SDK
// 1.x speaks the initialize handshake (2025-11-25): the server asks the user with
// `elicitation/create` requests, answered by the handler this client registers.
//
// Prints `typescript-surface: N passed, M failed` and exits 1 on any failure.

import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual, parseArgs } from 'node:util';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  ElicitRequestSchema,
  McpError,
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';

import { J, check, expect, report } from './checks.mjs';
import { answerFor, checkAsking, checkCompletion, expectError as expectErrorOf, isPng, runSurface } from './surface-checks.mjs';

const expectError = (promise, code, what) => expectErrorOf(promise, code, what, McpError);

const HERE = dirname(fileURLToPath(import.meta.url));
const INTEROP = resolve(HERE, '..');
// 2025-11-25 and earlier: resource not found is -32002 (2026-07-28 moved it to -32602).
const RESOURCE_NOT_FOUND = -32002;
const INVALID_PARAMS = -32602;

const { values: opts } = parseArgs({
  options: {
    server: { type: 'string', default: join(INTEROP, '..', 'target', 'debug', 'conformance_server') },
    'via-proxy': { type: 'string' },
  },
});
const PROXY = opts['via-proxy'];
const LABEL = PROXY ? 'typescript-surface-proxy' : 'typescript-surface';
/** The command this client starts: the server, or the proxy in front of it. */
const COMMAND = PROXY
  ? { command: PROXY, args: ['proxy', '--quiet-server', '--protocol', '2026-07-28', '--', opts.server, '--stdio'] }
  : { command: opts.server, args: ['--stdio'] };

/** A client whose elicitation handler records each question and answers `action` with `content`. */
async function connect(action, content, questions) {
  const transport = new StdioClientTransport({ ...COMMAND, stderr: 'inherit' });
  const client = new Client({ name: 'toolshape-interop-ts-surface', version: '0.0.0' }, { capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    questions.push(request.params);
    return content === undefined ? { action } : { action, content: answerFor(request.params, content) };
  });
  await client.connect(transport);
  return client;
}

async function exercise(client, questions) {
  await check('initialize: resources, prompts and completions offered', async () => {
    const caps = client.getServerCapabilities();
    expect(caps?.resources && caps?.prompts && caps?.completions, `capabilities ${J(caps)}`);
  });

  await check('resources/list: the three fixed resources with their MIME types', async () => {
    const { resources } = await client.listResources();
    const uris = new Set(resources.map((r) => r.uri));
    for (const uri of ['test://static-text', 'test://static-binary', 'test://watched-resource']) {
      expect(uris.has(uri), `missing ${uri} in ${J([...uris])}`);
    }
    expect(resources.find((r) => r.uri === 'test://static-binary').mimeType === 'image/png', 'mimeType of the PNG');
  });

  await check('resources/templates/list: the RFC 6570 template', async () => {
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(isDeepStrictEqual(resourceTemplates.map((t) => t.uriTemplate), ['test://template/{id}/data']), J(resourceTemplates));
  });

  await check('resources/read: text contents', async () => {
    const { contents } = await client.readResource({ uri: 'test://static-text' });
    expect(contents.length === 1 && contents[0].text === 'This is the content of the static text resource.', J(contents));
    expect(contents[0].uri === 'test://static-text', `uri ${contents[0].uri}`);
  });

  await check('resources/read: a base64 blob (a PNG)', async () => {
    const { contents } = await client.readResource({ uri: 'test://static-binary' });
    expect(typeof contents[0].blob === 'string' && isPng(contents[0].blob), `not the PNG: ${J(contents).slice(0, 200)}`);
  });

  await check('resources/read through the template: its variable bound', async () => {
    const { contents } = await client.readResource({ uri: 'test://template/123/data' });
    const data = JSON.parse(contents[0].text);
    expect(isDeepStrictEqual(data, { id: '123', templateTest: true, data: 'Data for ID: 123' }), J(data));
  });

  await check(`resources/read of a missing resource -> McpError ${RESOURCE_NOT_FOUND}`, async () => {
    const e = await expectError(client.readResource({ uri: 'test://no-such-resource' }), RESOURCE_NOT_FOUND, 'missing resource');
    expect(e.data?.uri === 'test://no-such-resource', `data ${J(e.data)}`);
  });

  await check('prompts/list: the five prompts, arguments declared', async () => {
    const { prompts } = await client.listPrompts();
    const names = new Set(prompts.map((p) => p.name));
    for (const name of ['test_simple_prompt', 'test_prompt_with_arguments', 'test_prompt_with_embedded_resource',
      'test_prompt_with_image', 'test_input_required_result_prompt']) {
      expect(names.has(name), `missing prompt ${name}`);
    }
    const args = prompts.find((p) => p.name === 'test_prompt_with_arguments').arguments.map((a) => [a.name, a.required]);
    expect(isDeepStrictEqual(args, [['arg1', true], ['arg2', true]]), J(args));
  });

  await check('prompts/get with arguments', async () => {
    const { messages } = await client.getPrompt({ name: 'test_prompt_with_arguments', arguments: { arg1: 'left', arg2: 'right' } });
    expect(messages.length === 1 && messages[0].role === 'user', J(messages));
    expect(messages[0].content.text === "Prompt with arguments: arg1='left', arg2='right'", J(messages[0].content));
  });

  await check('prompts/get: an embedded resource and an image', async () => {
    const embedded = await client.getPrompt({ name: 'test_prompt_with_embedded_resource', arguments: { resourceUri: 'test://static-text' } });
    const first = embedded.messages[0].content;
    expect(first.type === 'resource' && first.resource.uri === 'test://static-text', J(first));
    const image = await client.getPrompt({ name: 'test_prompt_with_image' });
    const block = image.messages[0].content;
    expect(block.type === 'image' && isPng(block.data), `not the PNG: ${block.type}`);
  });

  await check('prompts/get of an unknown prompt -> McpError -32602', async () => {
    await expectError(client.getPrompt({ name: 'no_such_prompt' }), INVALID_PARAMS, 'unknown prompt');
  });

  await checkCompletion(client);

  await checkAsking(client, questions);

  await check('resources/subscribe, then notifications/resources/updated', async () => {
    // The conformance server announces an update 100 ms after each subscription to it.
    const watched = 'test://watched-resource';
    const updated = new Promise((resolve) => {
      client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => resolve(n.params.uri));
    });
    const result = await client.subscribeResource({ uri: watched });
    expect(result && typeof result === 'object', J(result));
    const timeout = new Promise((resolve) => setTimeout(() => resolve('(none in 5 s)'), 5000));
    const uri = await Promise.race([updated, timeout]);
    expect(uri === watched, `resources/updated for ${uri}`);
  });

  await check('a tool added: notifications/tools/list_changed, then listed', async () => {
    // Only a change announced after the tool is called counts.
    let armed = false;
    const changed = new Promise((resolve) => {
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => armed && resolve(true));
    });
    armed = true;
    const result = await client.callTool({ name: 'test_trigger_tool_change', arguments: {} });
    expect(!result.isError, J(result));
    const timeout = new Promise((resolve) => setTimeout(() => resolve(false), 10000));
    expect(await Promise.race([changed, timeout]), 'no notifications/tools/list_changed in 10 s');
    const { tools } = await client.listTools();
    expect(tools.some((tool) => tool.name === 'test_dynamic_tool'), J(tools.map((t) => t.name)));
  });
}

await report(LABEL, () => runSurface(connect, exercise));
