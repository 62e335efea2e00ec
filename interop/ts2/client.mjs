#!/usr/bin/env node
// Drive `toolshape serve` on 2026-07-28 with the official TypeScript MCP SDK 2.x client
// (@modelcontextprotocol/client, pinned in package.json), over stdio or stateless Streamable HTTP,
// directly or through `toolshape proxy`.
//
// Usage: node client.mjs [--server PATH] [--page-size N] [--http] [--via-proxy]
//
// The 2.x SDK negotiates 2026-07-28 when asked (`versionNegotiation: { mode: 'auto' }` probes with
// `server/discover`; over stdio it probes on a sibling process first). On that revision any JSON
// Schema may be an `outputSchema` and any JSON value `structuredContent` (SEP-2106): `list_directory`
// answers an array and `count_lines` an integer, unwrapped. `Client.callTool` validates
// `structuredContent` against the listed `outputSchema` with the validator given as
// `jsonSchemaValidator` (ajv here, counting each tool's validations), and a control checks that a
// validator refusing the result makes `callTool` throw.
//
// Prints `typescript2[-http][-proxy]: N passed, M failed` and exits 1 on any failure.

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import { Client, ProtocolError, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/client/validators/ajv';

import { Failed, J, check, expect, report } from '../ts/checks.mjs';
import { checkErrors, checkToolValues, TOOLS, WRAP_KEY, makeFixture, same } from '../ts/workspace.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const INTEROP = resolve(HERE, '..');
const MODERN = '2026-07-28';

const { values: opts } = parseArgs({
  options: {
    server: { type: 'string', default: process.env.TOOLSHAPE_BIN ?? join(INTEROP, '..', 'target', 'debug', 'toolshape') },
    'page-size': { type: 'string', default: '3' },
    // Stateless Streamable HTTP (`serve --http ADDR --stateless`) instead of stdio.
    http: { type: 'boolean', default: false },
    // Through `toolshape proxy` in front of `toolshape serve` (the gateway must change nothing).
    'via-proxy': { type: 'boolean', default: false },
  },
});
const LABEL = `typescript2${opts.http ? '-http' : ''}${opts['via-proxy'] ? '-proxy' : ''}`;
const SERVER_NAME = opts['via-proxy'] ? 'toolshape-proxy' : 'toolshape';

/** Counts the SDK's validations of `structuredContent` per schema; `refuse` makes them fail. */
class CountingValidator {
  constructor() {
    this.ajv = new AjvJsonSchemaValidator();
    this.counts = new Map();
    this.refuse = false;
  }

  getValidator(schema) {
    const key = J(schema);
    const validate = this.ajv.getValidator(schema);
    return (input) => {
      this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
      if (this.refuse) return { valid: false, data: undefined, errorMessage: 'refused by the control' };
      return validate(input);
    };
  }
}

/**
 * Starts the HTTP server (or the proxy's HTTP front) on a port of the system's choosing and reads
 * the address it bound from its stderr (`... serving MCP on http://ADDR/mcp`), which is passed on.
 */
async function startHttp(args) {
  const child = spawn(opts.server, args('127.0.0.1:0'), { stdio: ['ignore', 'ignore', 'pipe'] });
  const lines = createInterface({ input: child.stderr });
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no "serving MCP on" line in 30 s')), 30000);
    child.once('exit', (code) => reject(new Error(`the server exited with ${code}`)));
    lines.on('line', (line) => {
      process.stderr.write(`${line}\n`);
      const found = line.match(/serving MCP on (http:\/\/\S+)/);
      if (found) {
        clearTimeout(timer);
        resolve(new URL(found[1]));
      }
    });
  });
  return { child, url };
}

async function main() {
  const root = mkdtempSync(join(tmpdir(), 'toolshape-interop-ts2-'));
  const files = makeFixture(root);
  const pageSize = opts['page-size'];
  const serve = ['serve', '--root', root, '--page-size', pageSize];
  let child;
  let transport;
  if (opts.http) {
    const args = opts['via-proxy']
      ? (address) => ['proxy', '--http', address, '--stateless', '--page-size', pageSize, '--', opts.server, ...serve]
      : (address) => [...serve, '--http', address, '--stateless'];
    const started = await startHttp(args);
    child = started.child;
    transport = new StreamableHTTPClientTransport(started.url);
  } else {
    transport = new StdioClientTransport({
      command: opts.server,
      args: opts['via-proxy'] ? ['proxy', '--page-size', pageSize, '--', opts.server, 'serve', '--root', root] : serve,
      stderr: 'inherit',
    });
  }
  const validator = new CountingValidator();
  const client = new Client(
    { name: 'toolshape-interop-ts2', version: '0.0.0' },
    { versionNegotiation: { mode: 'auto' }, jsonSchemaValidator: validator },
  );
  try {
    await client.connect(transport);
    await exercise(client, validator, root, files);
  } finally {
    await client.close().catch(() => {});
    child?.kill();
    rmSync(root, { recursive: true, force: true });
  }
}

async function exercise(client, validator, root, files) {
  await check(`negotiated ${MODERN} (versionNegotiation auto)`, async () => {
    expect(client.getNegotiatedProtocolVersion() === MODERN, `negotiated ${client.getNegotiatedProtocolVersion()}`);
    const v = client.getServerVersion();
    expect(v?.name === SERVER_NAME, `serverInfo ${J(v)}`);
    expect(client.getServerCapabilities()?.tools, 'no tools capability');
  });

  const tools = {};
  await check('tools/list: the SDK\'s aggregate lists all 7 tools', async () => {
    const listed = await client.listTools();
    expect(listed.nextCursor === undefined, `nextCursor ${listed.nextCursor}`);
    for (const t of listed.tools) tools[t.name] = t;
    expect(same(Object.keys(tools).sort(), TOOLS), `tools listed: ${Object.keys(tools).sort()}`);
  });

  await check(`tools/list page by page (page size ${opts['page-size']}): the same 7, with the cache hints`, async () => {
    const pages = [await client.request({ method: 'tools/list', params: {} })];
    while (pages.at(-1).nextCursor) {
      expect(pages.length < 100, 'pagination does not end');
      pages.push(await client.listTools({ cursor: pages.at(-1).nextCursor }));
    }
    expect(pages.length >= 3, `expected >= 3 pages, got ${pages.length}`);
    expect(pages.every((p) => p.tools.length <= 3), 'a page holds more than 3 tools');
    const names = pages.flatMap((p) => p.tools.map((t) => t.name)).sort();
    expect(same(names, TOOLS), `tools paged: ${names}`);
    const first = pages[0];
    expect(Number.isInteger(first.ttlMs) && ['public', 'private'].includes(first.cacheScope), `hints ${J({ ttlMs: first.ttlMs, cacheScope: first.cacheScope })}`);
  });

  await check(`tool schemas have ${MODERN}'s shape (any JSON Schema as outputSchema, nothing wrapped)`, async () => {
    for (const [name, t] of Object.entries(tools)) {
      expect(t.inputSchema?.type === 'object', `${name}: inputSchema type`);
      expect(!t._meta?.[WRAP_KEY], `${name}: wrapped on ${MODERN}: ${J(t._meta)}`);
    }
    expect(tools.read_text.outputSchema === undefined, 'read_text: outputSchema present');
    expect(tools.list_directory.outputSchema?.type === 'array', `list_directory: ${J(tools.list_directory.outputSchema)}`);
    expect(tools.count_lines.outputSchema?.type === 'integer', `count_lines: ${J(tools.count_lines.outputSchema)}`);
    for (const name of ['analyze_dataset', 'analyze_project', 'file_info', 'find']) {
      expect(tools[name].outputSchema?.type === 'object', `${name}: outputSchema type ${tools[name].outputSchema?.type}`);
    }
  });

  const unwrap = (name, res) => {
    expect(!res._meta?.[WRAP_KEY], `${name}: result wrapped on ${MODERN}`);
    return res.structuredContent;
  };
  await checkToolValues(client, unwrap, root, files);

  await check('SDK validated structuredContent of every tool with an outputSchema (ajv)', async () => {
    const missed = TOOLS.filter((n) => n !== 'read_text').filter((n) => !validator.counts.get(J(tools[n]?.outputSchema)));
    expect(missed.length === 0, `no validation for ${missed}`);
  });

  await check('SDK rejects structuredContent its validator refuses (control)', async () => {
    validator.refuse = true;
    let res;
    try {
      res = await client.callTool({ name: 'count_lines', arguments: { path: 'src/main.rs' } });
    } catch (e) {
      expect(/output schema|refused by the control/i.test(e?.message), `error ${e}`);
      return;
    } finally {
      validator.refuse = false;
    }
    throw new Failed(`a result its validator refused was accepted: ${J(res)}`);
  });

  await checkErrors(client, ProtocolError);
}

await report(LABEL, main);
