import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { test } from 'vitest';

/**
 * In a fresh process: measurements recorded before the metrics exist, whether prom-client is
 * loaded by then, and whether the metrics created afterwards hold them.
 */
const SCRIPT = `
import { createRequire } from 'node:module';
import { applyMetrics, processMetrics, record } from './src/metrics/index.ts';
const promLoaded = () => Object.keys(createRequire(import.meta.url).cache).some((k) => k.includes('/prom-client/'));
record({ m: 'indexed', stage: 'index', n: 3 });
applyMetrics([{ m: 'indexed', stage: 'index', n: 4 }]);
const before = promLoaded();
const text = await processMetrics().text();
const line = text.split('\\n').find((l) => l.startsWith('sandtrail_records_indexed_total{stage="index"}'));
console.log(JSON.stringify({ before, after: promLoaded(), line }));
`;

test('a process that serves no metrics never loads prom-client; metrics created later hold what was recorded before', () => {
  const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', SCRIPT], { encoding: 'utf8' });
  const r = JSON.parse(out.trim().split('\n').pop() as string) as { before: boolean; after: boolean; line: string };
  assert.equal(r.before, false, 'prom-client is not loaded by recording');
  assert.equal(r.after, true, 'creating the metrics loads it');
  assert.equal(r.line, 'sandtrail_records_indexed_total{stage="index"} 7', 'the measurements taken before are counted');
});
