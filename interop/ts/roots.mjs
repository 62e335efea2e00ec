#!/usr/bin/env node
// Roots asked outside any request, with the official TypeScript MCP SDK client
// (@modelcontextprotocol/sdk, pinned in package.json) on 2025-11-25.
//
// Usage: node roots.mjs [--server PATH] [--via-proxy TOOLSHAPE]
//
// The server is `test_server --roots-at-start` (crates/toolshape-harness/src/early_roots.rs): as soon
// as its client has finished the handshake it asks for the client's roots (`roots/list`, outside any
// request, as the official filesystem server does), and its `roots_at_start` tool says what it learnt.
// The client answers with a `roots/list` handler and declares `roots.listChanged`; its roots then
// change, it says so (`sendRootsListChanged`) and the server learns the new ones.
//
// --via-proxy runs the checks through `TOOLSHAPE proxy --protocol 2025-11-25` (stdio its only front,
// so one client): the upstream's question, asked before the client even connected, waits for the
// client's handshake and reaches it, and so does the change; with `proxy --root DIR` the upstream
// learns the operator's folder instead and the client is never asked.
//
// Prints `typescript-roots: N passed, M failed` (or `typescript-roots-proxy`) and exits 1 on any failure.

import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

import { J, check, expect, report } from './checks.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const INTEROP = resolve(HERE, '..');
const CLIENT_ROOT = 'file:///work/interop-client';
const LATER_ROOT = 'file:///work/interop-later';

const { values: opts } = parseArgs({
  options: {
    server: { type: 'string', default: join(INTEROP, '..', 'target', 'debug', 'test_server') },
    'via-proxy': { type: 'string' },
  },
});
const PROXY = opts['via-proxy'];
const LABEL = PROXY ? 'typescript-roots-proxy' : 'typescript-roots';

/** The server's command, through the proxy (with `flags`) when asked to. */
function command(...flags) {
  const upstream = [opts.server, '--roots-at-start'];
  return PROXY
    ? { command: PROXY, args: ['proxy', '--quiet-server', '--protocol', '2025-11-25', ...flags, '--', ...upstream] }
    : { command: upstream[0], args: upstream.slice(1) };
}

/**
 * Calls `roots_at_start` over a fresh connection; with `changed`, the client's roots then become that
 * URI, the client says so and calls again for the second asking. The structured results, and how
 * often the client was asked.
 */
async function learnt(server, changed) {
  let asked = 0;
  let roots = [CLIENT_ROOT];
  const client = new Client(
    { name: 'toolshape-interop-ts-roots', version: '0.0.0' },
    { capabilities: { roots: { listChanged: true } } },
  );
  client.setRequestHandler(ListRootsRequestSchema, async () => {
    asked++;
    return { roots: roots.map((uri) => ({ uri })) };
  });
  await client.connect(new StdioClientTransport({ ...server, stderr: 'inherit' }));
  try {
    const results = [await client.callTool({ name: 'roots_at_start', arguments: {} })];
    if (changed !== undefined) {
      roots = [changed];
      await client.sendRootsListChanged();
      results.push(await client.callTool({ name: 'roots_at_start', arguments: { asked: 2 } }));
    }
    return { results, asked };
  } finally {
    await client.close();
  }
}

await report(LABEL, async () => {
  await check(
    'roots_at_start: the client\'s roots, asked outside any request, and again once the client said they changed',
    async () => {
      const { results: [first, second], asked } = await learnt(command(), LATER_ROOT);
      expect(!first.isError, `isError: ${J(first)}`);
      expect(J(first.structuredContent?.roots) === J([CLIENT_ROOT]), `first ${J(first.structuredContent)}`);
      expect(!second.isError && J(second.structuredContent?.roots) === J([LATER_ROOT]), `after the change: ${J(second)}`);
      expect(asked === 2, `the client was asked ${asked} times`);
    },
  );

  if (PROXY) {
    await check('proxy --root: the operator\'s folder, the client never asked', async () => {
      const folder = realpathSync(mkdtempSync(join(tmpdir(), 'toolshape-roots-')));
      try {
        const operator = pathToFileURL(folder).href;
        const { results: [result], asked } = await learnt(command('--root', folder));
        expect(!result.isError, `isError: ${J(result)}`);
        expect(J(result.structuredContent?.roots) === J([operator]), `structured ${J(result.structuredContent)}`);
        expect(asked === 0, `the client was asked ${asked} times`);
      } finally {
        rmSync(folder, { recursive: true, force: true });
      }
    });
  }
});
