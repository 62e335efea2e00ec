// Reads the checks.json files the conformance suite wrote under RESULTS and
// compares the failing checks with EXPECTED (conformance/expected-failures.txt).
//
//   node compare.mjs RESULTS EXPECTED VERSION/SIDE...
//
// RESULTS/<version>/<side>/<pass>/ holds one suite run's output directory (`-o`);
// <pass> is `default` (each scenario at the revision the suite picks) or a
// protocol revision (`--spec-version`), which then suffixes the scenario:
// `tools-list@2026-07-28`. A check is identified as `<scenario>:<check id>`;
// repeated ids collapse to their most severe status. SUCCESS passes, FAILURE
// and WARNING fail (as the suite's own baseline logic treats them), INFO and
// SKIPPED do not count.
//
// EXPECTED lines: `<suite-version> <server|client> <scenario>[:<check id>] | <reason>`
// (`#` comments and blank lines ignored). An entry without `:<check id>`
// excuses every failing check of that scenario. Exits 1 on a failing check no
// entry covers, on an entry that covers no failing check (stale), and on a
// malformed entry; prints `conformance-<version>-<side>: N passed, U failed (K known failures, …)`
// where U counts the failures not listed (any makes the run fail)
// per VERSION/SIDE, and writes RESULTS/<version>/<side>/scenarios.txt.
import fs from "node:fs";
import path from "node:path";

const [results, expectedPath, ...runs] = process.argv.slice(2);
const SEVERITY = { FAILURE: 4, WARNING: 3, SUCCESS: 2, SKIPPED: 1, INFO: 0 };
const TIMESTAMP = /-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$/;

function findChecks(dir, base = dir, found = []) {
  if (!fs.existsSync(dir)) return found;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) findChecks(full, base, found);
    else if (entry.name === "checks.json") {
      const rel = path.relative(base, path.dirname(full)).split(path.sep).join("/");
      found.push({ scenario: rel.replace(TIMESTAMP, "").replace(/^server-/, ""), file: full });
    }
  }
  return found;
}

function loadRun(version, side) {
  const root = path.join(results, version, side);
  const checks = new Map(); // "<scenario>:<id>" -> status
  const scenarios = new Map(); // scenario -> { passed, failed, failing: [] }
  const passes = fs.existsSync(root)
    ? fs.readdirSync(root, { withFileTypes: true }).filter((e) => e.isDirectory())
    : [];
  for (const pass of passes) {
    const suffix = pass.name === "default" ? "" : `@${pass.name}`;
    for (const { scenario, file } of findChecks(path.join(root, pass.name))) {
      const name = scenario + suffix;
      const stats = scenarios.get(name) ?? { passed: 0, failed: 0, failing: [] };
      scenarios.set(name, stats);
      let list;
      try {
        list = JSON.parse(fs.readFileSync(file, "utf8"));
      } catch (error) {
        list = [{ id: "unreadable-checks-json", status: "FAILURE", errorMessage: String(error) }];
      }
      const worst = new Map();
      for (const check of list) {
        const previous = worst.get(check.id);
        if (!previous || (SEVERITY[check.status] ?? 0) > (SEVERITY[previous.status] ?? 0)) {
          worst.set(check.id, check);
        }
      }
      for (const [id, check] of worst) {
        checks.set(`${name}:${id}`, { ...check, scenario: name });
        if (check.status === "SUCCESS") stats.passed++;
        if (check.status === "FAILURE" || check.status === "WARNING") {
          stats.failed++;
          stats.failing.push(`${id} [${check.status}] ${(check.errorMessage ?? check.description ?? "").split("\n")[0].slice(0, 200)}`);
        }
      }
    }
  }
  return { checks, scenarios };
}

const expected = [];
let malformed = 0;
for (const [index, raw] of fs.readFileSync(expectedPath, "utf8").split("\n").entries()) {
  const line = raw.trim();
  if (!line || line.startsWith("#")) continue;
  const match = line.match(/^(\S+)\s+(server|client)\s+(\S+)\s*\|\s*(\S.*)$/);
  if (!match) {
    console.error(`expected-failures.txt:${index + 1}: malformed entry (want "<version> <server|client> <scenario>[:<check>] | <reason>"): ${line}`);
    malformed++;
    continue;
  }
  expected.push({ version: match[1], side: match[2], id: match[3], line: index + 1, used: false });
}

let status = malformed > 0 ? 1 : 0;
const summaries = [];
const problems = [];
for (const run of runs) {
  const [version, side] = run.split("/");
  const { checks, scenarios } = loadRun(version, side);
  const entries = expected.filter((e) => e.version === version && e.side === side);
  let passed = 0;
  let failed = 0;
  let unexpected = 0;
  for (const [key, check] of checks) {
    if (check.status === "SUCCESS") passed++;
    if (check.status !== "FAILURE" && check.status !== "WARNING") continue;
    failed++;
    const covering = entries.filter((e) => e.id === key || e.id === check.scenario);
    if (covering.length === 0) {
      unexpected++;
      problems.push(`unexpected failure: ${version} ${side} ${key} [${check.status}] ${(check.errorMessage ?? check.description ?? "").split("\n")[0].slice(0, 300)}`);
    }
    for (const entry of covering) entry.used = true;
  }
  for (const entry of entries) {
    if (!entry.used) problems.push(`stale entry (line ${entry.line}): ${version} ${side} ${entry.id} no longer fails (or never ran)`);
  }
  const table = [...scenarios.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, s]) => `${s.failed === 0 ? "PASS" : "FAIL"} ${name}: ${s.passed} passed, ${s.failed} failed${s.failing.map((f) => `\n    - ${f}`).join("")}`);
  fs.mkdirSync(path.join(results, version, side), { recursive: true });
  fs.writeFileSync(path.join(results, version, side, "scenarios.txt"), table.join("\n") + "\n");
  summaries.push(
    `conformance-${version}-${side}: ${passed} passed, ${unexpected} failed ` +
      `(${failed - unexpected} known failures, listed in conformance/expected-failures.txt)`,
  );
  if (checks.size === 0) problems.push(`${version} ${side}: no results at all (the suite did not run?)`);
}
for (const problem of problems) console.error(problem);
if (problems.length > 0) status = 1;
for (const line of summaries) console.log(line);
process.exit(status);
