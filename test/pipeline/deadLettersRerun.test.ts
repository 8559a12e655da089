import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'vitest';
import { backfillExitCode, runBackfillCommand } from '../../src/cli/index.js';
import { createLogger } from '../../src/log/index.js';
import { openStore } from '../../src/store/index.js';
import { writeFeed } from '../../src/synth/index.js';
import { tempDir, testConfig } from '../support/env.js';
import { expectedDead, storeContents } from '../support/storeContents.js';

const log = createLogger('silent');
const START = '202611070000';

test('a minute read again whole after a fix stores its once-rejected line and removes that dead letter; the others stay', async () => {
  const dir = tempDir();
  // one line of 300 KB: over a 200 KB line limit, within the default; and a few malformed lines
  const manifest = await writeFeed({
    out: join(dir, 'feed'),
    seed: 21,
    start: START,
    minutes: 3,
    perMinute: 20,
    malformedRate: 0.05,
    oversizeBytes: 300_000,
  });
  const oversize = manifest.oversize;
  assert.ok(oversize);
  const file = join(dir, 's.db');
  const source = { source: `dir:${join(dir, 'feed')}` };
  const tight = await testConfig(dir, { store: `sqlite:${file}`, feed: { maxLineBytes: 200_000 } });
  const first = await runBackfillCommand(source, { config: tight, log });
  assert.equal(backfillExitCode(first), 0);
  const before = storeContents(file);
  assert.ok(!before.ids.includes(oversize.id), 'too long the first time');
  const tooLong = `normalize:${oversize.minute}:${oversize.line}`;
  assert.ok(
    before.dead.some((d) => d.batch === oversize.minute && d.line === oversize.line),
    JSON.stringify(before.dead),
  );

  const roomy = await testConfig(dir, { store: `sqlite:${file}` });
  const again = await runBackfillCommand(source, { config: roomy, log });
  assert.equal(backfillExitCode(again), 0);
  const after = storeContents(file);
  assert.deepEqual(after.ids, manifest.expectedIds, 'every record stored, the long line too');
  const store = openStore(`sqlite:${file}`, roomy, { readOnly: true });
  try {
    assert.equal(await store.dlq.get(tooLong), null, 'its dead letter is gone');
    // the malformed lines are still dead letters, once each
    assert.ok(expectedDead(manifest).length > 0);
  } finally {
    await store.close();
  }
  assert.deepEqual(after.dead, expectedDead(manifest));
});
