#!/usr/bin/env node
// Tools that ask the client (sampling, roots, elicitation, several questions at once) on 2026-07-28,
// with the official TypeScript MCP SDK 2.x client (@modelcontextprotocol/client, pinned in
// package.json) over stdio.
//
// Usage: node asks.mjs [--server PATH] [--via-proxy TOOLSHAPE]
//
// The server is `test_server` (crates/toolshape-harness/src/asking.rs); the checks are
// ../ts/asks-checks.mjs. The server asks in `input_required` results (`ask_twice`: two rounds); the
// SDK answers each question through the `sampling/createMessage`, `roots/list` and
// `elicitation/create` handlers this client registers and retries the call. --via-proxy runs the
// checks through `TOOLSHAPE proxy --protocol 2025-11-25`: the upstream asks with requests in the
// middle of the call, which the proxy turns into those rounds for this client.
//
// Prints `typescript2-asks: N passed, M failed` (or `typescript2-asks-proxy`) and exits 1 on any failure.

import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

import { answering, checkAsks } from '../ts/asks-checks.mjs';
import { J, check, expect, report } from '../ts/checks.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const INTEROP = resolve(HERE, '..');
const MODERN = '2026-07-28';

const { values: opts } = parseArgs({
  options: {
    server: { type: 'string', default: join(INTEROP, '..', 'target', 'debug', 'test_server') },
    'via-proxy': { type: 'string' },
  },
});
const PROXY = opts['via-proxy'];
const LABEL = PROXY ? 'typescript2-asks-proxy' : 'typescript2-asks';
const COMMAND = PROXY
  ? { command: PROXY, args: ['proxy', '--quiet-server', '--protocol', '2025-11-25', '--', opts.server] }
  : { command: opts.server, args: [] };

await report(LABEL, async () => {
  const asked = { model: [], roots: [], user: [] };
  const answer = answering(asked);
  const client = new Client(
    { name: 'toolshape-interop-ts2-asks', version: '0.0.0' },
    { capabilities: { sampling: {}, roots: {}, elicitation: {} }, versionNegotiation: { mode: 'auto' } },
  );
  client.setRequestHandler('sampling/createMessage', async (request) => answer.sampling(request.params));
  client.setRequestHandler('roots/list', async () => answer.roots());
  client.setRequestHandler('elicitation/create', async (request) => answer.elicitation(request.params));
  await client.connect(new StdioClientTransport({ ...COMMAND, stderr: 'inherit' }));
  try {
    await check(`${MODERN} negotiated`, async () => {
      expect(client.getNegotiatedProtocolVersion() === MODERN, `negotiated ${J(client.getNegotiatedProtocolVersion())}`);
    });
    await checkAsks(client, asked);
  } finally {
    await client.close();
  }
});
