import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'vitest';
import { runBackfillCommand } from '../../src/cli/index.js';
import { createLogger } from '../../src/log/index.js';
import { openStore } from '../../src/store/index.js';
import type { FeedManifest } from '../../src/synth/index.js';
import { runCli } from '../support/cli.js';
import { tempDir, testConfig } from '../support/env.js';
import { openRealStore, realCluster, realEsContents, type Reachable } from '../support/realElasticsearch.js';

const cluster = await realCluster();
const skip = 'skip' in cluster ? cluster.skip : undefined;

const feed = join('sample', 'feed');
const manifest = JSON.parse(readFileSync(join(feed, 'manifest.json'), 'utf8')) as FeedManifest;

test.skipIf(skip !== undefined)(
  `Elasticsearch through the pipeline on a real cluster: behaviours land in the index of their own day; under a retention they are past, the index stage deletes that day and writes nothing back${skip ? ` (skipped: ${skip})` : ''}`,
  async () => {
    const real = cluster as Reachable;
    const fixture = openRealStore(real);
    const admin = fixture.admin;
    try {
      const dir = tempDir();
      const prefix = fixture.prefix;
      const log = createLogger('silent');
      const alias = `${prefix}-behaviours`;
      const base = { store: `es:${real.url}`, elasticsearch: { indexPrefix: prefix } };
      const dayIndices = async (): Promise<string[]> =>
        Object.keys(await admin.indices.getAlias({ name: alias }))
          .filter((i) => /\d{4}\.\d\d\.\d\d$/.test(i))
          .sort();

      // the sample feed's behaviours were last modified on 2026-11-01
      const kept = await testConfig(dir, { ...base, retention: { days: 365 } });
      const first = await runBackfillCommand({ source: `dir:${feed}` }, { config: kept, log });
      assert.equal(first.summary.batches.failed, 0, JSON.stringify(first.summary.failures));
      assert.deepEqual(await dayIndices(), [`${prefix}-behaviours-2026.11.01`]);
      // each behaviour once across the partitions (realEsContents refuses a second copy)
      assert.deepEqual((await realEsContents(admin, prefix)).ids, [...manifest.expectedIds].sort());

      // the same minutes again under a retention of 1 day: every write is past it, and the index
      // stage's retention steps delete the expired day whole
      const expired = await testConfig(dir, { ...base, retention: { days: 1 } });
      const second = await runBackfillCommand({ source: `dir:${feed}` }, { config: expired, log });
      assert.equal(second.summary.batches.failed, 0, JSON.stringify(second.summary.failures));
      assert.equal(second.summary.batches.ok, manifest.files.length);
      assert.deepEqual(await dayIndices(), []);
      assert.deepEqual((await realEsContents(admin, prefix)).ids, []);
      // bookkeeping written now is kept
      await admin.indices.refresh({ index: `${prefix}-batches` });
      assert.ok((await admin.count({ index: `${prefix}-batches` })).count >= manifest.files.length);
    } finally {
      await fixture.close();
    }
  },
  120_000,
);

test('a backfill of minutes older than retention.days says once, at warn, that their documents were not stored', async () => {
  const dir = tempDir();
  // the sample feed's minutes are of 2026-11-01: past a one-day retention on any later day
  const r = await runCli(['backfill', '--source', 'dir:sample/feed', '--store', `sqlite:${join(dir, 's.db')}`], {
    env: { SANDTRAIL_RETENTION_DAYS: '1', REDIS_URL: '' },
  });
  assert.equal(r.code, 0, r.stderr);
  const warnings = r.stderr.split('\n').filter((l) => l.includes('"level":40') && l.includes('were not stored'));
  assert.equal(warnings.length, 1, r.stderr);
  assert.match(warnings[0] as string, /more than retention\.days \(1\) days ago were not stored.*raise retention\.days or set it off/);
});

test('a backfill of one minute applies retention to what the store held before it, however short it is', async () => {
  const dir = tempDir();
  const db = join(dir, 's.db');
  const env = { REDIS_URL: '' };
  const kept = await runCli(['backfill', '--source', 'dir:sample/feed', '--store', `sqlite:${db}`], { env });
  assert.equal(kept.code, 0, kept.stderr);
  const one = join(dir, 'one');
  mkdirSync(one);
  copyFileSync(join(feed, '202611010000.jsonl.bz2'), join(one, '202611010000.jsonl.bz2'));
  const r = await runCli(['backfill', '--source', `dir:${one}`, '--store', `sqlite:${db}`], {
    env: { ...env, SANDTRAIL_RETENTION_DAYS: '1' },
  });
  assert.equal(r.code, 0, r.stderr);
  const store = openStore(`sqlite:${db}`);
  try {
    assert.equal(await store.sink.count(), 0);
  } finally {
    await store.close();
  }
}, 60_000);
