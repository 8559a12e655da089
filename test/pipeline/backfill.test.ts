import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'vitest';
import { runBackfillCommand } from '../../src/cli/index.js';
import { createLogger } from '../../src/log/index.js';
import { writeFeed } from '../../src/synth/index.js';
import { tempDir, testConfig } from '../support/env.js';
import { assertNewestWins, expectedDead, storeContents } from '../support/storeContents.js';
import { addMinutes } from '../../src/minute/index.js';

test('backfill through the real queue stores exactly the expected ids, dead-letters exactly the malformed lines, and a re-run converges', async () => {
  const dir = tempDir();
  const start = '202611010000';
  const manifest = await writeFeed({
    out: join(dir, 'feed'),
    seed: 11,
    start,
    minutes: 8,
    perMinute: 30,
    malformedRate: 0.05,
    bigRate: 0.05,
    missingMinutes: [addMinutes(start, 3)],
    oversizeBytes: 2_000_000,
  });
  assert.ok(manifest.malformedLines > 0 && manifest.updates.length > 0, 'feed has malformed lines and updates');
  // a small line cap turns the generated oversize record into a line_too_long dead letter
  const config = await testConfig(dir, { feed: { maxLineBytes: 1_500_000 }, index: { chunkMaxDocs: 7, highWaterChunks: 2 } });
  const ctx = { config, log: createLogger('silent') };
  const expectedIds = manifest.expectedIds.filter((id) => id !== manifest.oversize?.id || manifest.updates.some((u) => u.id === id));

  const run1 = await runBackfillCommand({ source: `dir:${join(dir, 'feed')}`, from: start, to: addMinutes(start, 7) }, ctx);
  assert.deepEqual(run1.summary, {
    batches: { ok: 7, empty: 0, missing: 1, failed: 0, pending: 0 },
    records: { indexed: manifest.records - 1, rejected: manifest.malformedLines + 1 },
    api_units: 0,
    failures: [],
    requeued: 0,
    interrupted: false,
  });
  const file = join(dir, 'store.db');
  const after1 = storeContents(file);
  assert.deepEqual(after1.ids, expectedIds);
  const oversize = manifest.oversize!;
  assert.deepEqual(
    after1.dead,
    [...expectedDead(manifest), { batch: oversize.minute, line: oversize.line, stage: 'normalize' }].sort(
      (a, b) => a.batch.localeCompare(b.batch) || a.line - b.line,
    ),
  );
  assertNewestWins(manifest, after1.lmd);

  const run2 = await runBackfillCommand({ source: `dir:${join(dir, 'feed')}` }, ctx);
  assert.deepEqual(run2.summary, run1.summary, 'a re-run (range from the files found) gives the same summary');
  const after2 = storeContents(file);
  assert.deepEqual(after2, after1, 're-running converges to the same store');

  // the same range into a fresh store on the same Redis is really processed again
  const otherFile = join(dir, 'other.db');
  const other = { config: { ...config, store: `sqlite:${otherFile}` }, log: ctx.log };
  const run3 = await runBackfillCommand({ source: `dir:${join(dir, 'feed')}`, from: start, to: addMinutes(start, 7) }, other);
  assert.deepEqual(run3.summary, run1.summary);
  assert.deepEqual(storeContents(otherFile), after1, 'a re-run into another store holds the same');
});
