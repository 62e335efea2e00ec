// The workspace fixture and the checks of each tool's values, shared by the TypeScript clients of
// both SDK lines (ts/client.mjs on @modelcontextprotocol/sdk 1.x, ts2/client.mjs on
// @modelcontextprotocol/client 2.x). Plain Node: no SDK is imported here.

import { readFileSync, writeFileSync, mkdirSync, readdirSync, lstatSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';

import { Failed, J, check, expect } from './checks.mjs';

const INTEROP = resolve(dirname(fileURLToPath(import.meta.url)), '..');

export const TOOLS = ['analyze_dataset', 'analyze_project', 'count_lines', 'file_info', 'find', 'list_directory', 'read_text'];
/** The tools whose output is not an object: wrapped as `{"result": v}` before 2026-07-28. */
export const WRAPPED = new Set(['list_directory', 'count_lines']);
export const WRAP_KEY = 'dev.toolshape/wrappedOutput';

// ----------------------------------------------------------------------------- fixture

export function makeFixture(root) {
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
export const same = (a, b) => isDeepStrictEqual(a, b);

/**
 * Calls every tool with valid arguments and checks each result: not an error, the text block
 * equal to `structuredContent` (none for `read_text`), and the value `unwrap(name, result)` takes
 * out of it for the client's revision right for the fixture in `root` (`files`).
 */
export async function checkToolValues(client, unwrap, root, files) {
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
  const calls = valueChecks(call, root, files);
  for (const name of ['list_directory', 'file_info', 'read_text', 'count_lines', 'find', 'analyze_project', 'analyze_dataset']) {
    await check(`call ${name}: right shape and values`, calls[name]);
  }
}

/**
 * The value checks of every tool, by name: `call(name, args)` calls the tool, checks the result's
 * shape for the client's revision and returns its value (the result itself for `read_text`).
 */
function valueChecks(call, root, files) {
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
  return calls;
}

/** One invalid argument set per tool: each must give an `isError` result. */
export const INVALID = [
  ['list_directory', {}],
  ['file_info', { path: 5 }],
  ['read_text', { path: 'README.md', maxBytes: 0 }],
  ['count_lines', { path: 'src/main.rs', extra: true }],
  ['find', { path: 'Cargo.toml', glob: '*.toml' }],
  ['analyze_project', { path: 7 }],
  ['analyze_dataset', { path: 'data/measurements.csv', analysisType: 'median' }],
];

/**
 * The error checks: each invalid argument set and each tool-level failure gives an `isError`
 * result; an unknown tool is a protocol error `-32602`, thrown as the SDK's `errorClass`.
 */
export async function checkErrors(client, errorClass) {
  for (const [name, args] of INVALID) {
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

  await check(`unknown tool -> ${errorClass.name} -32602`, async () => {
    let res;
    try {
      res = await client.callTool({ name: 'no_such_tool', arguments: {} });
    } catch (e) {
      expect(e instanceof errorClass && e.code === -32602, `error ${e} (code ${e?.code})`);
      return;
    }
    throw new Failed(`no error for an unknown tool: ${J(res)}`);
  });
}
