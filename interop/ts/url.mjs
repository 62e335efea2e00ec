#!/usr/bin/env node
// URL-mode elicitation beyond the question, with the official TypeScript MCP SDK client
// (@modelcontextprotocol/sdk, pinned in package.json) on 2025-11-25: a tool that sends the user to a
// page (`elicitation/create` in URL mode) whose visit the server then announces complete
// (`notifications/elicitation/complete`), and a tool that needs the user on a page first (the
// `-32042` URLElicitationRequiredError), completed the same way, then retried.
//
// Usage: node url.mjs [--server PATH] [--via-proxy TOOLSHAPE]
//
// The server is `test_server --url-elicitation` (crates/toolshape-harness/src/url_elicitation.rs).
// --via-proxy runs the checks through `TOOLSHAPE proxy` in front of it, the proxy speaking 2025-11-25
// to it too: the upstream's error and completions pass through with the upstream's ids.
//
// Prints `typescript-url: N passed, M failed` (or `typescript-url-proxy`) and exits 1 on any failure.

import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  ElicitationCompleteNotificationSchema,
  ElicitRequestSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';

import { Failed, J, check, expect, report } from './checks.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const INTEROP = resolve(HERE, '..');
const URL_ELICITATION_REQUIRED = -32042;

const { values: opts } = parseArgs({
  options: {
    server: { type: 'string', default: join(INTEROP, '..', 'target', 'debug', 'test_server') },
    'via-proxy': { type: 'string' },
  },
});
const PROXY = opts['via-proxy'];
const LABEL = PROXY ? 'typescript-url-proxy' : 'typescript-url';
const COMMAND = PROXY
  ? {
      command: PROXY,
      args: ['proxy', '--quiet-server', '--protocol', '2025-11-25', '--', opts.server, '--url-elicitation'],
    }
  : { command: opts.server, args: ['--url-elicitation'] };

/** Resolves with the id once `completed` holds it, or fails after 5 s. */
async function completion(completed, id) {
  const deadline = Date.now() + 5000;
  while (!completed.includes(id)) {
    if (Date.now() > deadline) throw new Failed(`no completion of ${id} within 5 s (got ${J(completed)})`);
    await new Promise((done) => setTimeout(done, 20));
  }
}

await report(LABEL, async () => {
  const questions = [];
  const completed = [];
  const client = new Client(
    { name: 'toolshape-interop-ts-url', version: '0.0.0' },
    { capabilities: { elicitation: { form: {}, url: {} } } },
  );
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    questions.push(request.params);
    return { action: 'accept' };
  });
  client.setNotificationHandler(ElicitationCompleteNotificationSchema, (notification) => {
    completed.push(notification.params.elicitationId);
  });
  await client.connect(new StdioClientTransport({ ...COMMAND, stderr: 'inherit' }));

  await check('visit_page: a URL elicitation with its id, then its completion', async () => {
    const result = await client.callTool({ name: 'visit_page', arguments: {} });
    expect(!result.isError, `isError: ${J(result)}`);
    const asked = questions.at(-1);
    expect(asked?.mode === 'url' && asked.url?.startsWith('https://example.com/page'), `asked ${J(asked)}`);
    expect(typeof asked.elicitationId === 'string', `no elicitationId in ${J(asked)}`);
    const visited = result.structuredContent;
    expect(visited?.action === 'accept' && visited.elicitationId === asked.elicitationId, J(visited));
    await completion(completed, asked.elicitationId);
  });

  let signIn;
  await check('sign_in: -32042 naming the sign-in page', async () => {
    try {
      const got = await client.callTool({ name: 'sign_in', arguments: { account: 'ts' } });
      throw new Failed(`no error, got ${J(got)}`);
    } catch (e) {
      if (e instanceof Failed) throw e;
      expect(e instanceof McpError, `not an McpError: ${e}`);
      expect(e.code === URL_ELICITATION_REQUIRED, `code ${e.code} (${e.message})`);
      const elicitations = e.data?.elicitations ?? [];
      expect(elicitations.length === 1, J(e.data));
      signIn = elicitations[0];
      expect(signIn.mode === 'url' && signIn.elicitationId === 'sign-in-ts', J(signIn));
      expect(signIn.url === 'https://example.com/sign-in?account=ts', J(signIn));
    }
  });

  await check('sign_in: its completion arrives, and the retry succeeds', async () => {
    expect(signIn !== undefined, 'no -32042 before');
    await completion(completed, 'sign-in-ts');
    const result = await client.callTool({ name: 'sign_in', arguments: { account: 'ts' } });
    expect(!result.isError && result.structuredContent?.signed_in === 'ts', J(result));
  });

  await client.close();
});
