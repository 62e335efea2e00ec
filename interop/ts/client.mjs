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

import { mkdtempSync, readFileSync, writeFileSync, mkdirSync, readdirSync, lstatSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual, parseArgs } from 'node:util';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { McpError, ErrorCode, LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';

import { Failed, J, check, expect, report } from './checks.mjs';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';

const HERE = dirname(fileURLToPath(import.meta.url));
const INTEROP = resolve(HERE, '..');
const WRAP_KEY = 'dev.toolshape/wrappedOutput';
const TOOLS = ['analyze_dataset', 'analyze_project', 'count_lines', 'file_info', 'find', 'list_directory', 'read_text'];
const WRAPPED = new Set(['list_directory', 'count_lines']);

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

// ----------------------------------------------------------------------------- fixture

function makeFixture(root) {
  const { files } = JSON.parse(readFileSync(join(INTEROP, 'fixture.json'), 'utf8'));
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, rel)), { recursive: true });
    writeFileSync(join(root, rel), text, 'utf8');
  }
  return files;
}

/** Lines as an editor counts them: newlines, plus one for an unterminated last line. */
const editorLines = (t) => (t.match(/\n/g) ?? []).length + (t && !t.endsWith('\n') ? 1 : 0);
const bytes = (t) => Buffer.byteLength(t, 'utf8');
const MISSING = new Set(['', 'na', 'n/a', 'nan', 'null', 'none']);
const isMissing = (c) => MISSING.has(c.trim().toLowerCase());

function csvExpectations(text) {
  const rows = text.split('\n').filter((l) => l !== '').map((l) => l.split(','));
  const [header, ...data] = rows;
  const columns = {};
  const numeric = [];
  let missing = 0;
  header.forEach((name, i) => {
    const cells = data.map((row) => row[i] ?? '');
    missing += cells.filter(isMissing).length;
    const vals = cells.map((c) => (isMissing(c) ? null : Number(c)));
    if (vals.every((v) => v === null || Number.isFinite(v))) {
      numeric.push(name);
      columns[name] = vals;
    }
  });
  const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const statistics = {};
  for (const name of numeric) {
    const xs = columns[name].filter((v) => v !== null);
    const s = [...xs].sort((a, b) => a - b);
    const m = mean(xs);
    const mid = s.length >> 1;
    statistics[name] = {
      count: xs.length,
      mean: m,
      median: s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2,
      standardDeviation: xs.length > 1 ? Math.sqrt(xs.reduce((a, x) => a + (x - m) ** 2, 0) / (xs.length - 1)) : 0,
      min: s[0],
      max: s[s.length - 1],
    };
  }
  const correlations = [];
  for (let a = 0; a < numeric.length; a++) {
    for (let b = a + 1; b < numeric.length; b++) {
      const pairs = columns[numeric[a]].map((x, i) => [x, columns[numeric[b]][i]]).filter(([x, y]) => x !== null && y !== null);
      const xs = pairs.map((p) => p[0]);
      const ys = pairs.map((p) => p[1]);
      if (pairs.length < 2 || new Set(xs).size < 2 || new Set(ys).size < 2) continue;
      const mx = mean(xs);
      const my = mean(ys);
      let sxy = 0, sxx = 0, syy = 0;
      for (let i = 0; i < xs.length; i++) {
        sxy += (xs[i] - mx) * (ys[i] - my);
        sxx += (xs[i] - mx) ** 2;
        syy += (ys[i] - my) ** 2;
      }
      correlations.push([numeric[a], numeric[b], sxy / Math.sqrt(sxx * syy)]);
    }
  }
  return { summary: { totalRows: data.length, totalColumns: header.length, missingValues: missing }, statistics, correlations };
}

// ----------------------------------------------------------------------------- checks

function close(a, b, what) {
  expect(typeof a === 'number' && Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b)), `${what}: got ${a}, want ${b}`);
}
const same = (a, b) => isDeepStrictEqual(a, b);


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

  const call = async (name, args) => {
    const res = await client.callTool({ name, arguments: args });
    expect(!res.isError, `${name}${J(args)} isError: ${J(res.content)}`);
    if (name === 'read_text') {
      expect(res.structuredContent === undefined, 'read_text returned structuredContent');
      return res;
    }
    const texts = res.content.filter((c) => c.type === 'text').map((c) => c.text);
    expect(texts.length === 1, `${name}: ${texts.length} text blocks`);
    expect(same(JSON.parse(texts[0]), res.structuredContent), `${name}: text block differs from structuredContent`);
    return unwrap(name, res);
  };

  const kindOf = (p) => {
    const s = lstatSync(p);
    return s.isSymbolicLink() ? 'symlink' : s.isDirectory() ? 'dir' : s.isFile() ? 'file' : 'other';
  };

  const want = csvExpectations(files['data/measurements.csv']);
  const calls = {
    list_directory: async () => {
      for (const rel of ['.', 'src']) {
        const v = await call('list_directory', { path: rel });
        expect(Array.isArray(v), `list_directory ${rel}: not an array: ${J(v)}`);
        const names = readdirSync(join(root, rel)).sort();
        expect(same(v.map((e) => e.name).sort(), names), `list_directory ${rel}: ${v.map((e) => e.name)}, want ${names}`);
        for (const e of v) {
          const p = join(root, rel, e.name);
          expect(e.kind === kindOf(p), `${e.name}: kind ${e.kind}`);
          if (e.kind === 'file') expect(e.size === lstatSync(p).size, `${e.name}: size ${e.size}`);
        }
      }
    },
    file_info: async () => {
      const text = files['src/lib.rs'];
      const v = await call('file_info', { path: 'src/lib.rs' });
      expect(v.path === 'src/lib.rs' && v.kind === 'file' && v.isSymlink === false, `file_info ${J(v)}`);
      expect(v.size === bytes(text), `size ${v.size}`);
      expect(v.binary === false && v.directory === null, `binary/directory ${J(v)}`);
      expect(same(v.text, { lines: editorLines(text), isUtf8: true }), `text ${J(v.text)}`);
      const d = await call('file_info', { path: 'src' });
      expect(d.kind === 'dir' && d.text === null, `file_info src ${J(d)}`);
      expect(d.directory.entries === 3 && d.directory.files === 2 && d.directory.dirs === 1, `directory ${J(d.directory)}`);
    },
    read_text: async () => {
      let res = await call('read_text', { path: 'README.md' });
      const texts = res.content.filter((c) => c.type === 'text').map((c) => c.text);
      expect(same(texts, [files['README.md']]), `read_text README.md: ${J(texts)}`);
      res = await call('read_text', { path: 'README.md', maxBytes: 8 });
      const t = res.content.filter((c) => c.type === 'text').map((c) => c.text).join('');
      expect(t.startsWith(files['README.md'].slice(0, 8)), `read_text maxBytes=8: ${J(t)}`);
    },
    count_lines: async () => {
      for (const rel of ['src/main.rs', 'src/lib.rs', 'data/measurements.csv']) {
        const v = await call('count_lines', { path: rel });
        expect(Number.isInteger(v) && v === editorLines(files[rel]), `count_lines ${rel}: ${J(v)}, want ${editorLines(files[rel])}`);
      }
    },
    find: async () => {
      let v = await call('find', { glob: '**/*.rs' });
      const rs = Object.keys(files).filter((k) => k.endsWith('.rs')).sort();
      expect(v.truncated === false, 'find truncated');
      expect(same(v.matches.map((m) => m.path).sort(), rs), `find **/*.rs: ${J(v.matches)}`);
      for (const m of v.matches) expect(m.kind === 'file' && m.size === bytes(files[m.path]), `match ${J(m)}`);
      v = await call('find', { path: 'Cargo.toml' });
      expect(same(v.matches.map((m) => m.path), ['Cargo.toml']) && v.matches[0].kind === 'file', `find path: ${J(v)}`);
      v = await call('find', { path: 'no/such/file' });
      expect(same(v, { matches: [], truncated: false }), `find missing path: ${J(v)}`);
    },
    analyze_project: async () => {
      for (const args of [{}, { path: '.' }]) {
        const { project: p } = await call('analyze_project', args);
        expect(p.name === 'interop-fixture' && p.version === '0.3.1', `name/version ${J(p)}`);
        expect(same(p.dependencies.direct, ['anyhow', 'serde']), `dependencies ${J(p.dependencies)}`);
        const code = Object.entries(files).filter(([k]) => /\.(rs|py)$/.test(k)).reduce((a, [, t]) => a + editorLines(t), 0);
        expect(p.metrics.linesOfCode === code, `linesOfCode ${J(p.metrics)}, want ${code}`);
        const langs = Object.fromEntries(p.languages.map((l) => [l.name, l]));
        expect(langs.Rust?.fileCount === 3, `Rust ${J(langs.Rust)}`);
        expect(langs.Python?.fileCount === 1, `Python ${J(langs.Python)}`);
        expect(Math.abs(p.languages.reduce((a, l) => a + l.percentage, 0) - 100) < 0.1, 'percentages do not add up to 100');
      }
    },
    analyze_dataset: async () => {
      let v = await call('analyze_dataset', { path: 'data/measurements.csv', analysisType: 'descriptive' });
      expect(v.analysisType === 'descriptive' && !('correlations' in v), `descriptive keys ${Object.keys(v)}`);
      expect(same(v.summary, want.summary), `summary ${J(v.summary)}, want ${J(want.summary)}`);
      expect(same(Object.keys(v.statistics).sort(), Object.keys(want.statistics).sort()), `columns ${Object.keys(v.statistics)}`);
      for (const [col, w] of Object.entries(want.statistics)) {
        const g = v.statistics[col];
        expect(g.count === w.count, `${col}.count ${g.count}`);
        for (const k of ['mean', 'median', 'standardDeviation', 'min', 'max']) close(g[k], w[k], `${col}.${k}`);
      }
      v = await call('analyze_dataset', { path: 'data/measurements.csv', analysisType: 'correlation' });
      expect(v.analysisType === 'correlation' && !('statistics' in v), `correlation keys ${Object.keys(v)}`);
      const got = v.correlations.map((c) => [c.variable1, c.variable2]);
      expect(same(got, want.correlations.map(([a, b]) => [a, b])), `pairs ${J(got)}`);
      v.correlations.forEach((c, i) => close(c.coefficient, want.correlations[i][2], `r(${c.variable1},${c.variable2})`));
    },
  };
  for (const name of ['list_directory', 'file_info', 'read_text', 'count_lines', 'find', 'analyze_project', 'analyze_dataset']) {
    await check(`call ${name}: right shape and values`, calls[name]);
  }

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

  const invalid = [
    ['list_directory', {}],
    ['file_info', { path: 5 }],
    ['read_text', { path: 'README.md', maxBytes: 0 }],
    ['count_lines', { path: 'src/main.rs', extra: true }],
    ['find', { path: 'Cargo.toml', glob: '*.toml' }],
    ['analyze_project', { path: 7 }],
    ['analyze_dataset', { path: 'data/measurements.csv', analysisType: 'median' }],
  ];
  for (const [name, args] of invalid) {
    await check(`call ${name} ${J(args)} -> isError`, async () => {
      const res = await client.callTool({ name, arguments: args });
      expect(res.isError === true, `isError ${res.isError}: ${J(res.content)}`);
      expect(res.content?.[0]?.type === 'text' && res.content[0].text, 'no error text');
    });
  }

  await check('tool-level failures (missing file, path outside root) -> isError', async () => {
    for (const [name, args] of [['count_lines', { path: 'missing.txt' }], ['read_text', { path: '../outside' }]]) {
      const res = await client.callTool({ name, arguments: args });
      expect(res.isError === true, `${name}${J(args)}: isError ${res.isError}`);
    }
  });

  await check('unknown tool -> McpError -32602', async () => {
    let res;
    try {
      res = await client.callTool({ name: 'no_such_tool', arguments: {} });
    } catch (e) {
      expect(e instanceof McpError && e.code === ErrorCode.InvalidParams, `error ${e} (code ${e?.code})`);
      return;
    }
    throw new Failed(`no error for an unknown tool: ${J(res)}`);
  });
}

await report(LABEL, main);
