#!/usr/bin/env node
// URL-mode elicitation on 2026-07-28 with the official TypeScript MCP SDK 2.x client
// (@modelcontextprotocol/client, pinned in package.json) over stdio.
//
// Usage: node url.mjs [--server PATH] [--via-proxy TOOLSHAPE]
//
// The server is `test_server --url-elicitation` (crates/toolshape-harness/src/url_elicitation.rs):
// `visit_page` sends the user to a page; `sign_in` needs the user on the account's sign-in page
// first. On 2026-07-28 each page comes in an `input_required` round (no `elicitationId` there):
// the client's `elicitation/create` handler, back from the page, accepts, and the SDK retries
// the call with the answer. --via-proxy runs the checks through `TOOLSHAPE proxy --protocol
// 2025-11-25` in front of the same server: the upstream's URL `elicitation/create` and its
// `-32042` error reach this client as those rounds.
//
// Prints `typescript2-url[-proxy]: N passed, M failed` and exits 1 on any failure.

import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

import { J, check, expect, report } from '../ts/checks.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const INTEROP = resolve(HERE, '..');
const MODERN = '2026-07-28';
// Back from the page after the server took the visit as complete (150 ms after it was asked).
const VISITING_MS = 400;

const { values: opts } = parseArgs({
  options: {
    server: { type: 'string', default: join(INTEROP, '..', 'target', 'debug', 'test_server') },
    'via-proxy': { type: 'string' },
  },
});
const PROXY = opts['via-proxy'];
const LABEL = PROXY ? 'typescript2-url-proxy' : 'typescript2-url';
const COMMAND = PROXY
  ? {
      command: PROXY,
      args: ['proxy', '--quiet-server', '--protocol', '2025-11-25', '--', opts.server, '--url-elicitation'],
    }
  : { command: opts.server, args: ['--url-elicitation'] };

await report(LABEL, async () => {
  const questions = [];
  const client = new Client(
    { name: 'toolshape-interop-ts2-url', version: '0.0.0' },
    { capabilities: { elicitation: { form: {}, url: {} } }, versionNegotiation: { mode: 'auto' } },
  );
  client.setRequestHandler('elicitation/create', async (request) => {
    questions.push(request.params);
    await new Promise((done) => setTimeout(done, VISITING_MS));
    return { action: 'accept' };
  });
  await client.connect(new StdioClientTransport({ ...COMMAND, stderr: 'inherit' }));
  try {
    await check(`negotiated ${MODERN}`, async () => {
      expect(client.getNegotiatedProtocolVersion() === MODERN, `negotiated ${client.getNegotiatedProtocolVersion()}`);
    });

    await check('visit_page: a URL elicitation in a round, accepted, the retry visited', async () => {
      const before = questions.length;
      const result = await client.callTool({ name: 'visit_page', arguments: {} });
      expect(!result.isError, `isError: ${J(result.content)}`);
      expect(questions.length === before + 1, `${questions.length - before} questions`);
      const asked = questions.at(-1);
      expect(asked.mode === 'url' && asked.url?.startsWith('https://example.com/page'), `asked ${J(asked)}`);
      expect(asked.elicitationId === undefined, `an elicitationId on ${MODERN}: ${J(asked)}`);
      expect(result.structuredContent?.action === 'accept', `structured ${J(result.structuredContent)}`);
    });

    await check('sign_in: the sign-in page asked in a round, the retry signed in', async () => {
      const account = `ts2-${PROXY ? 'proxy' : 'direct'}`;
      const result = await client.callTool({ name: 'sign_in', arguments: { account } });
      expect(!result.isError && result.structuredContent?.signed_in === account, `result ${J(result)}`);
      const pages = questions.filter((q) => q.url === `https://example.com/sign-in?account=${account}`);
      expect(pages.length >= 1, `questions ${J(questions)}`);
    });
  } finally {
    await client.close().catch(() => {});
  }
});
