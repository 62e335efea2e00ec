// The checks' bookkeeping, shared by client.mjs and surface.mjs: each check passes or fails on
// its own, its name on stderr; the summary line `LABEL: N passed, M failed` on stdout.

export class Failed extends Error {}

export function expect(cond, what) {
  if (!cond) throw new Failed(what);
}

export const J = (v) => JSON.stringify(v);

export const results = { passed: 0, failed: 0 };

export async function check(name, fn) {
  try {
    await fn();
    results.passed++;
    console.error(`  ok   ${name}`);
  } catch (e) {
    results.failed++;
    console.error(`  FAIL ${name}: ${e instanceof Failed ? e.message : e?.stack ?? e}`);
  }
}

/** Runs `main`, counts a crash as one failure, prints the summary and sets the exit code. */
export async function report(label, main) {
  try {
    await main();
  } catch (e) {
    console.error(e?.stack ?? e);
    results.failed++;
  }
  console.log(`${label}: ${results.passed} passed, ${results.failed} failed`);
  process.exitCode = results.failed === 0 && results.passed > 0 ? 0 : 1;
}
