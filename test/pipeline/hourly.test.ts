import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'vitest';
import { runBackfillCommand } from '../../src/cli/index.js';
import { createLogger } from '../../src/log/index.js';
import { writeFeed } from '../../src/synth/index.js';
import { tempDir, testConfig } from '../support/env.js';
import { expectedDead, storeContents } from '../support/storeContents.js';
import { addMinutes } from '../../src/minute/index.js';

test('--hourly reads whole hours from a .tar.bz2 package: same store, batch log and dead letters as minute files', async () => {
  const dir = tempDir();
  const start = '202611050000';
  // one whole hour plus two minutes of the next hour (read as minute files)
  const manifest = await writeFeed({
    out: join(dir, 'minutes'),
    seed: 3,
    start,
    minutes: 62,
    perMinute: 4,
    malformedRate: 0.05,
    bigRate: 0,
    missingMinutes: [addMinutes(start, 17)],
  });
  const pkgDir = join(dir, 'feed');
  mkdirSync(pkgDir);
  const hourFiles = manifest.files.filter((f) => f.minute.startsWith('2026110500')).map((f) => f.file);
  execFileSync('bash', [
    '-c',
    `tar -C ${join(dir, 'minutes')} -cf - ${hourFiles.join(' ')} | bzip2 -c > ${join(pkgDir, '2026110500.tar.bz2')}`,
  ]);
  for (const f of manifest.files.filter((x) => x.minute.startsWith('2026110501')))
    execFileSync('cp', [join(dir, 'minutes', f.file), pkgDir]);

  const config = await testConfig(dir);
  const run = await runBackfillCommand(
    { source: `dir:${pkgDir}`, from: start, to: addMinutes(start, 61), hourly: true },
    { config, log: createLogger('silent') },
  );
  assert.deepEqual(run.summary, {
    batches: { ok: 61, empty: 0, missing: 1, failed: 0, pending: 0 },
    records: { indexed: manifest.records, rejected: manifest.malformedLines },
    api_units: 0,
    failures: [],
    requeued: 0,
    interrupted: false,
  });
  const stored = storeContents(join(dir, 'store.db'));
  assert.deepEqual(stored.ids, manifest.expectedIds);
  assert.deepEqual(stored.dead, expectedDead(manifest));
});
