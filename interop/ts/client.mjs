#!/usr/bin/env node
// Drive `toolshape serve` with the official TypeScript MCP SDK client
// (@modelcontextprotocol/sdk, pinned in package.json): `Client` + `StdioClientTransport`.
//
// Usage: node client.mjs [--server PATH] [--page-size N]
//
// The TS SDK 1.x speaks the initialize handshake only (LATEST_PROTOCOL_VERSION 2025-11-25, no
// `server/discover`), so there is one mode. `Client.callTool` validates `structuredContent` with
// ajv against the validator that `Client.listTools` compiled from the tool's `outputSchema`
// (`cacheToolMetadata`); this script spies on those compiled validators to prove every tool with
// an output schema went through them, and checks once that a schema the result cannot satisfy
// makes `callTool` throw.
//
// Prints `typescript: N passed, M failed` and exits 1 on any failure.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { McpError, LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';

import { Failed, J, check, expect, report } from './checks.mjs';
import { checkErrors, checkToolValues, TOOLS, WRAPPED, WRAP_KEY, makeFixture, same } from './workspace.mjs';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';

const HERE = dirname(fileURLToPath(import.meta.url));
const INTEROP = resolve(HERE, '..');

const { values: opts } = parseArgs({
  options: {
    server: { type: 'string', default: process.env.TOOLSHAPE_BIN ?? join(INTEROP, '..', 'target', 'debug', 'toolshape') },
    'page-size': { type: 'string', default: '3' },
    // Through `toolshape proxy` in front of `toolshape serve` (the gateway must change nothing).
    'via-proxy': { type: 'boolean', default: false },
  },
});
const LABEL = opts['via-proxy'] ? 'typescript-proxy' : 'typescript';
const SERVER_NAME = opts['via-proxy'] ? 'toolshape-proxy' : 'toolshape';

async function main() {
  const root = mkdtempSync(join(tmpdir(), 'toolshape-interop-ts-'));
  const files = makeFixture(root);
  const transport = new StdioClientTransport({
    command: opts.server,
    args: opts['via-proxy']
      ? ['proxy', '--page-size', opts['page-size'], '--', opts.server, 'serve', '--root', root]
      : ['serve', '--root', root, '--page-size', opts['page-size']],
    stderr: 'inherit',
  });
  // Client.connect() hands the negotiated version to transport.setProtocolVersion when the
  // transport has one (the stdio transport has none): record it.
  let negotiated;
  transport.setProtocolVersion = (v) => { negotiated = v; };
  const client = new Client({ name: 'toolshape-interop-ts', version: '0.0.0' });
  try {
    await client.connect(transport);
    await exercise(client, root, files, () => negotiated);
  } finally {
    await client.close().catch(() => {});
    rmSync(root, { recursive: true, force: true });
  }
}

async function exercise(client, root, files, negotiated) {
  await check('negotiated 2025-11-25 via initialize', async () => {
    const v = client.getServerVersion();
    expect(LATEST_PROTOCOL_VERSION === '2025-11-25', `SDK LATEST_PROTOCOL_VERSION ${LATEST_PROTOCOL_VERSION}`);
    expect(v?.name === SERVER_NAME, `serverInfo ${J(v)}`);
    expect(client.getServerCapabilities()?.tools, 'no tools capability');
    expect(negotiated() === '2025-11-25', `negotiated protocol version ${negotiated()}`);
  });

  const tools = {};
  const all = [];
  await check('tools/list paginated (page size 3) lists all 7 tools', async () => {
    const pages = [];
    let cursor;
    do {
      const page = await client.listTools(cursor ? { cursor } : undefined);
      pages.push(page);
      cursor = page.nextCursor;
      expect(pages.length < 100, 'pagination does not end');
    } while (cursor);
    expect(pages.length >= 3, `expected >= 3 pages, got ${pages.length}`);
    expect(pages.every((p) => p.tools.length <= 3), 'a page holds more than 3 tools');
    for (const p of pages) for (const t of p.tools) { tools[t.name] = t; all.push(t); }
    expect(same(Object.keys(tools).sort(), TOOLS), `tools listed: ${Object.keys(tools).sort()}`);
    // SDK 1.32.2: every listTools() call clears the compiled validators and refills them from that
    // page only, so after a paginated listing only the last page's tools would be validated.
    const last = pages[pages.length - 1].tools.filter((t) => t.outputSchema).map((t) => t.name).sort();
    const cached = TOOLS.filter((n) => client.getToolOutputValidator(n));
    if (!same(cached, last)) console.error(`  note: validators after paging: ${cached} (expected the last page's: ${last})`);
    else console.error(`  note: after paging, the SDK holds validators only for the last page (${cached}); re-caching all ${all.length} tools`);
    // Work-around: feed the whole listing to the SDK's own cache builder (JS-callable, `private` in the .d.ts).
    client.cacheToolMetadata(all);
    const now = TOOLS.filter((n) => client.getToolOutputValidator(n));
    expect(same(now, TOOLS.filter((n) => n !== 'read_text')), `validators compiled for ${now}`);
  });

  // Spy on the ajv validators callTool() uses: count per tool.
  const validated = {};
  const cache = client._cachedToolOutputValidators;
  expect(cache instanceof Map, 'SDK internals changed: no _cachedToolOutputValidators map');
  for (const [name, fn] of cache) {
    cache.set(name, (input) => {
      validated[name] = (validated[name] ?? 0) + 1;
      return fn(input);
    });
  }

  await check('tool schemas have the era\'s shape', async () => {
    for (const [name, t] of Object.entries(tools)) {
      expect(t.inputSchema?.type === 'object', `${name}: inputSchema type`);
      if (name === 'read_text') {
        expect(t.outputSchema === undefined, 'read_text: outputSchema present');
        continue;
      }
      expect(t.outputSchema?.type === 'object', `${name}: outputSchema type ${t.outputSchema?.type} (must be object before 2026)`);
      if (WRAPPED.has(name)) {
        expect(t._meta?.[WRAP_KEY] === 'result', `${name}: _meta ${J(t._meta)}`);
        expect(same(t.outputSchema.required, ['result']), `${name}: wrapped schema ${J(t.outputSchema)}`);
      }
    }
  });

  const unwrap = (name, res) => {
    const sc = res.structuredContent;
    if (WRAPPED.has(name)) {
      expect(res._meta?.[WRAP_KEY] === 'result', `${name}: result _meta ${J(res._meta)}`);
      expect(sc && typeof sc === 'object' && same(Object.keys(sc), ['result']), `${name}: not wrapped: ${J(sc)}`);
      return sc.result;
    }
    expect(!res._meta?.[WRAP_KEY], `${name}: unexpected wrap marker`);
    return sc;
  };

  await checkToolValues(client, unwrap, root, files);

  await check('SDK validated structuredContent of every tool with an outputSchema (ajv)', async () => {
    const wantNames = TOOLS.filter((n) => n !== 'read_text');
    expect(same(Object.keys(validated).sort(), wantNames), `ajv validation ran for ${Object.keys(validated).sort()}, want ${wantNames}`);
  });

  await check('SDK rejects structuredContent that violates the schema (control)', async () => {
    const saved = cache.get('count_lines');
    cache.set('count_lines', new AjvJsonSchemaValidator().getValidator({ type: 'object', required: ['nope'] }));
    try {
      await client.callTool({ name: 'count_lines', arguments: { path: 'src/main.rs' } });
    } catch (e) {
      expect(e instanceof McpError && /does not match the tool's output schema/.test(e.message), `error ${e}`);
      return;
    } finally {
      cache.set('count_lines', saved);
    }
    throw new Failed('a result violating the outputSchema was accepted: validation is bypassed');
  });

  await checkErrors(client, McpError);
}

await report(LABEL, main);
