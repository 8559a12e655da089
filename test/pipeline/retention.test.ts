import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, test } from 'vitest';
import { runBackfillCommand } from '../../src/cli/index.js';
import { createLogger } from '../../src/log/index.js';
import { openStore } from '../../src/store/index.js';
import type { FeedManifest } from '../../src/synth/index.js';
import { runCli } from '../support/cli.js';
import { tempDir, testConfig } from '../support/env.js';
import { FakeElasticsearch } from '../support/fakeElasticsearch.js';

const fake = new FakeElasticsearch();
afterAll(() => fake.close());

const feed = join('sample', 'feed');
const manifest = JSON.parse(readFileSync(join(feed, 'manifest.json'), 'utf8')) as FeedManifest;

test('Elasticsearch through the pipeline: behaviours land in the index of their own day; under a retention they are past, the index stage deletes that day and writes nothing back', async () => {
  const url = await fake.listen();
  const dir = tempDir();
  const prefix = 'ret';
  const log = createLogger('silent');
  const alias = `${prefix}-behaviours`;
  const base = { store: `es:${url}`, elasticsearch: { indexPrefix: prefix } };

  // the sample feed's behaviours were last modified on 2026-11-01
  const kept = await testConfig(dir, { ...base, retention: { days: 365 } });
  const first = await runBackfillCommand({ source: `dir:${feed}` }, { config: kept, log });
  assert.equal(first.summary.batches.failed, 0, JSON.stringify(first.summary.failures));
  const days = fake.aliasIndices(alias).filter((i) => /\d{4}\.\d\d\.\d\d$/.test(i));
  assert.deepEqual(days, [`${prefix}-behaviours-2026.11.01`]);
  assert.equal(fake.docs(alias).size, manifest.expectedIds.length);
  for (const [id] of fake.docs(alias)) assert.equal(fake.copies(alias, id).length, 1, id);
  assert.ok(fake.policies()[alias], 'es setup installed the lifecycle policy');

  // the same minutes again under a retention of 1 day: every write is past it, and the index
  // stage's retention steps delete the expired day whole
  const expired = await testConfig(dir, { ...base, retention: { days: 1 } });
  const second = await runBackfillCommand({ source: `dir:${feed}` }, { config: expired, log });
  assert.equal(second.summary.batches.failed, 0, JSON.stringify(second.summary.failures));
  assert.equal(second.summary.batches.ok, manifest.files.length);
  assert.deepEqual(
    fake.aliasIndices(alias).filter((i) => /\d{4}\.\d\d\.\d\d$/.test(i)),
    [],
  );
  assert.equal(fake.docs(alias).size, 0);
  // bookkeeping written now is kept
  assert.equal(fake.docs(`${prefix}-batches`).size >= manifest.files.length, true);
}, 120_000);

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
