import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, test } from 'vitest';
import { msToMinute } from '../../src/minute/index.js';
import { writeFeed, type FeedManifest } from '../../src/synth/index.js';
import { runCli } from '../support/cli.js';
import { tempDir, testRedisUrl, uniquePrefix } from '../support/env.js';
import { FakeElasticsearch } from '../support/fakeElasticsearch.js';

const feed = join('sample', 'feed');
const manifest = JSON.parse(readFileSync(join(feed, 'manifest.json'), 'utf8')) as FeedManifest;

const fakeEs = new FakeElasticsearch();
afterAll(() => fakeEs.close());

const sinks: [string, () => Promise<Record<string, string>>][] = [
  ['sqlite', async () => ({ SANDTRAIL_STORE: `sqlite:${join(tempDir(), 's.db')}` })],
  ['elasticsearch', async () => ({ ELASTICSEARCH_URL: await fakeEs.listen(), SANDTRAIL_ELASTICSEARCH_INDEX_PREFIX: 'status' })],
];

for (const [name, sink] of sinks)
  test(`status shows queue depths, recent batch outcomes, gaps and the dead-letter count after a backfill (${name})`, async () => {
    const env = {
      REDIS_URL: await testRedisUrl(),
      SANDTRAIL_QUEUE_PREFIX: uniquePrefix(),
      ...(await sink()),
    };
    assert.equal((await runCli(['backfill', '--source', `dir:${feed}`, '--json'], { env })).code, 0);
    const r = await runCli(['status', '--json', '--last', '3'], { env });
    assert.equal(r.code, 0, r.stderr);
    const s = JSON.parse(r.stdout) as {
      cursor: string | null;
      queues: { feed: Record<string, number>; index: Record<string, number> };
      recent_batches: { batch: string; status: string }[];
      gaps: string[];
      dead_letters: number;
      alerts: string[];
    };
    assert.equal(s.cursor, null, 'no live cursor yet');
    assert.equal(s.queues.feed.completed, manifest.minutes);
    assert.equal(s.queues.feed.waiting, 0);
    assert.equal(s.queues.index.waiting, 0);
    assert.deepEqual(s.gaps, manifest.missing);
    assert.equal(s.dead_letters, manifest.malformedLines);
    assert.equal(s.recent_batches.length, 3);
    assert.deepEqual(s.alerts, []);
    const text = await runCli(['status'], { env });
    assert.match(text.stdout, new RegExp(`gaps \\(missing minutes\\): ${manifest.missing[0]}`));
    assert.match(text.stdout, /cursor: \(none\)/);
    assert.match(text.stdout, new RegExp(`^feed queue: waiting 0, active 0, delayed 0, failed 0, completed ${manifest.minutes}$`, 'm'));
    // index jobs are removed once done: no "completed 0" that would read as nothing indexed
    assert.match(text.stdout, /^index queue: waiting 0, active 0, delayed 0, failed 0$/m);
    assert.match(text.stdout, /^recent batches:\n {2}\d{12} /m);
    // none asked for: no heading over nothing
    const none = await runCli(['status', '--last', '0'], { env });
    assert.equal(none.code, 0, none.stderr);
    assert.doesNotMatch(none.stdout, /recent batches/);
  });

test('status lag stays that of the newest minutes after a backfill of older minutes into the same store', async () => {
  const dir = tempDir();
  const recent = msToMinute(Date.now() - 3 * 3600_000);
  const old = msToMinute(Date.now() - 17 * 86_400_000);
  await writeFeed({ out: join(dir, 'recent'), seed: 3, start: recent, minutes: 3, perMinute: 2, malformedRate: 0 });
  await writeFeed({ out: join(dir, 'old'), seed: 4, start: old, minutes: 3, perMinute: 2, malformedRate: 0 });
  const env = { REDIS_URL: await testRedisUrl(), SANDTRAIL_QUEUE_PREFIX: uniquePrefix(), SANDTRAIL_STORE: `sqlite:${join(dir, 's.db')}` };
  const lag = async (): Promise<number> => {
    const r = await runCli(['status', '--json'], { env });
    assert.equal(r.code, 0, r.stderr);
    return (JSON.parse(r.stdout) as { lag_seconds: number }).lag_seconds;
  };
  assert.equal((await runCli(['backfill', '--source', `dir:${join(dir, 'recent')}`], { env })).code, 0);
  const before = await lag();
  // three hours, less the three minutes stored
  assert.ok(before > 3 * 3600 - 5 * 60 && before < 3 * 3600, `lag ${before} s`);
  assert.equal((await runCli(['backfill', '--source', `dir:${join(dir, 'old')}`], { env })).code, 0);
  const after = await lag();
  assert.ok(Math.abs(after - before) < 120, `lag ${before} s, then ${after} s`);
});
