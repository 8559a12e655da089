import { appendFileSync } from 'node:fs';
import type { Reporter, TestModule } from 'vitest/node';

/**
 * A closing report of the run's own, after vitest's: how many Elasticsearch cases ran against a
 * real node (the suites name it: "real cluster", "real node", "real Elasticsearch"), and every
 * skipped test by its full name, which carries the reason (vitest's default reporter prints a
 * count of skips only).
 */
export default class RunSummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const real = { passed: 0, failed: 0, skipped: 0 };
    const skipped: string[] = [];
    for (const m of testModules) {
      for (const t of m.children.allTests()) {
        const r = t.result();
        const state = r.state;
        const name = `${m.moduleId.replace(`${process.cwd()}/`, '')} > ${t.fullName}`;
        if (r.state === 'skipped') skipped.push(r.note ? `${name} (${r.note})` : name);
        if (/real (cluster|node|Elasticsearch)/i.test(t.fullName) && state !== 'pending') real[state] += 1;
      }
    }
    const url = process.env.ELASTICSEARCH_URL ?? process.env.SANDTRAIL_TEST_ES_URL;
    const lines = [
      `Elasticsearch: ${real.passed + real.failed} case(s) ran against a real cluster (${real.passed} passed, ${real.failed} failed, ${real.skipped} skipped)` +
        (url ? ` at ${url.replace(/\/\/[^@/]*@/, '//')}` : ': none was started'),
      ...(skipped.length > 0 ? [`${skipped.length} test(s) skipped:`, ...skipped.map((s) => `  - ${s}`)] : ['no test skipped']),
    ];
    process.stdout.write(`\n${lines.join('\n')}\n`);
    // the test command gathers the skips of its runs, prints them last and judges them (scripts/test.sh)
    const log = process.env.SANDTRAIL_TEST_SKIP_LOG;
    if (log && skipped.length > 0) appendFileSync(log, skipped.map((s) => `${s}\n`).join(''));
  }
}
