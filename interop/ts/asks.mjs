#!/usr/bin/env node
// Tools that ask the client (sampling, roots, elicitation, several questions at once), with the
// official TypeScript MCP SDK client (@modelcontextprotocol/sdk, pinned in package.json) on 2025-11-25.
//
// Usage: node asks.mjs [--server PATH] [--via-proxy TOOLSHAPE]
//
// The server is `test_server` (crates/toolshape-harness/src/asking.rs); the checks are
// asks-checks.mjs. The server asks with requests in the middle of each call; the client answers
// with its `sampling/createMessage`, `roots/list` and `elicitation/create` handlers. --via-proxy
// runs the checks through `TOOLSHAPE proxy --protocol 2026-07-28`: the upstream asks in
// `input_required` rounds, which the proxy turns into those requests for this client.
//
// Prints `typescript-asks: N passed, M failed` (or `typescript-asks-proxy`) and exits 1 on any failure.

import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

import { answering, checkAsks } from './asks-checks.mjs';
import { J, check, expect, report } from './checks.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const INTEROP = resolve(HERE, '..');

const { values: opts } = parseArgs({
  options: {
    server: { type: 'string', default: join(INTEROP, '..', 'target', 'debug', 'test_server') },
    'via-proxy': { type: 'string' },
  },
});
const PROXY = opts['via-proxy'];
const LABEL = PROXY ? 'typescript-asks-proxy' : 'typescript-asks';
const COMMAND = PROXY
  ? { command: PROXY, args: ['proxy', '--quiet-server', '--protocol', '2026-07-28', '--', opts.server] }
  : { command: opts.server, args: [] };

await report(LABEL, async () => {
  const asked = { model: [], roots: [], user: [] };
  const answer = answering(asked);
  const client = new Client(
    { name: 'toolshape-interop-ts-asks', version: '0.0.0' },
    { capabilities: { sampling: {}, roots: {}, elicitation: {} } },
  );
  client.setRequestHandler(CreateMessageRequestSchema, async (request) => answer.sampling(request.params));
  client.setRequestHandler(ListRootsRequestSchema, async () => answer.roots());
  client.setRequestHandler(ElicitRequestSchema, async (request) => answer.elicitation(request.params));
  const transport = new StdioClientTransport({ ...COMMAND, stderr: 'inherit' });
  // Client.connect() hands the negotiated version to transport.setProtocolVersion.
  let negotiated;
  transport.setProtocolVersion = (v) => { negotiated = v; };
  await client.connect(transport);
  try {
    await check('2025-11-25 negotiated', async () => {
      expect(negotiated === '2025-11-25', `negotiated ${J(negotiated)}`);
    });
    await checkAsks(client, asked);
  } finally {
    await client.close();
  }
});
