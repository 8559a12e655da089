import assert from 'node:assert/strict';
import { copyFileSync, existsSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { beforeAll, describe, test } from 'vitest';
import { runBackfillCommand } from '../../src/cli/index.js';
import { createLogger } from '../../src/log/index.js';
import { processMetrics } from '../../src/metrics/index.js';
import { openStore, type PivotKind, type Store, type Watch, type WatchHit } from '../../src/store/index.js';
import { writeFeed } from '../../src/synth/index.js';
import { recordRetroHits } from '../../src/watch/index.js';
import { addMinutes } from '../../src/minute/index.js';
import { cleanup, tempDir, testConfig, uniquePrefix } from '../support/env.js';

/** A webhook receiver on loopback: every request is kept; it answers `status`. */
async function receiver(status = 200): Promise<{ url: string; received: { path: string; type: string; body: unknown }[] }> {
  const received: { path: string; type: string; body: unknown }[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    let text = '';
    req.setEncoding('utf8').on('data', (s: string) => (text += s));
    req.on('end', () => {
      received.push({ path: req.url ?? '', type: req.headers['content-type'] ?? '', body: JSON.parse(text) as unknown });
      res.writeHead(status, { 'content-type': 'text/plain' }).end(status === 200 ? 'ok' : 'boom');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanup(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received };
}

/** Sum of a counter's samples whose labels include `labels`. */
async function counter(name: string, labels: Record<string, string>): Promise<number> {
  const metric = processMetrics().registry.getSingleMetric(name);
  if (!metric) return 0;
  const { values } = await metric.get();
  return values
    .filter((v) => Object.entries(labels).every(([k, x]) => (v.labels as Record<string, unknown>)[k] === x))
    .reduce((n, v) => n + v.value, 0);
}

const byId = (a: WatchHit, b: WatchHit): number => a.behaviourId.localeCompare(b.behaviourId) || a.lastModified - b.lastModified;
const readLines = (file: string): WatchHit[] =>
  existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as WatchHit)
    : [];

/** The ids a store's queries give for a watch's conditions, and which conditions each matched. */
async function expectedMatches(store: Store, w: Watch): Promise<Map<string, Watch['conditions']>> {
  const out = new Map<string, Watch['conditions']>();
  for (const c of w.conditions) for (const id of await store.sink.query(c.kind, c.value)) out.set(id, [...(out.get(id) ?? []), c]);
  return out;
}

/** Hits exactly equal to what the store holds for the watch: one per id, the stored version, the conditions matched. */
async function assertExactHits(store: Store, w: Watch): Promise<WatchHit[]> {
  const expected = await expectedMatches(store, w);
  const hits = (await store.watches.hits(w.name, { limit: 100_000 })).sort(byId);
  assert.deepEqual(
    hits.map((h) => h.behaviourId),
    [...expected.keys()].sort(),
    `hits of ${w.name} are the store's matches`,
  );
  for (const h of hits) {
    const doc = await store.sink.get(h.behaviourId);
    assert.equal(h.lastModified, doc?.last_modification_date);
    assert.equal(h.sha256, doc?.sha256);
    assert.equal(h.sandbox, doc?.sandbox_name);
    assert.deepEqual(h.matched, expected.get(h.behaviourId));
  }
  return hits;
}

const start = '202611020000';
const log = createLogger('silent');
let dir: string;
let feed: string;
/** A store filled before any watch existed. */
let refFile: string;
let behash: string;
let ja3: string;
let sha256: string;

async function backfillInto(
  storeFile: string,
  over: { queuePrefix?: string; webhooks?: Record<string, string> } = {},
): Promise<Awaited<ReturnType<typeof runBackfillCommand>>> {
  const config = await testConfig(dir, { store: `sqlite:${storeFile}`, index: { chunkMaxDocs: 9 }, ...over });
  const run = await runBackfillCommand({ source: `dir:${feed}`, from: start, to: addMinutes(start, 3) }, { config, log });
  assert.equal(run.summary.batches.failed, 0, JSON.stringify(run.summary));
  return run;
}

function addWatch(store: Store, name: string, conditions: [PivotKind, string][], notify: Watch['notify'] = {}): Promise<Watch> {
  return store.watches.add({ name, conditions: conditions.map(([kind, value]) => ({ kind, value })), notify, createdAt: Date.now() });
}

describe('watchlists through the real pipeline', () => {
  beforeAll(async () => {
    dir = tempDir();
    feed = join(dir, 'feed');
    // no updates: each behaviour has one version, so "one hit per id" is exact whatever the chunk order
    await writeFeed({ out: feed, seed: 5, start, minutes: 4, perMinute: 30, malformedRate: 0, bigRate: 0, variants: { update: 0 } });
    refFile = join(dir, 'ref.db');
    await backfillInto(refFile);
    const ref = openStore(`sqlite:${refFile}`);
    try {
      behash = (await ref.sink.top('behash', 1))[0]!.value;
      ja3 = (await ref.sink.top('ja3', 2))[1]!.value;
      const some = (await ref.sink.query('behash', (await ref.sink.top('behash', 3))[2]!.value))[0]!;
      sha256 = (await ref.sink.get(some))!.sha256;
    } finally {
      await ref.close();
    }
  });

  test('a backfill records exactly the matching behaviours as hits, notifies each once (file line, POST, metrics); a replay adds nothing', async () => {
    const hook = await receiver();
    const storeFile = join(dir, 'live.db');
    const store = openStore(`sqlite:${storeFile}`);
    const clusterFile = join(dir, 'alerts', 'deep', 'cluster.jsonl');
    const sampleFile = join(dir, 'alerts', 'sample.jsonl');
    let cluster: Watch, sample: Watch;
    try {
      // an upper-case hash matches: hashes compare lower-case
      cluster = await addWatch(
        store,
        'cluster',
        [
          ['behash', behash],
          ['ja3', ja3.toUpperCase()],
        ],
        {
          file: clusterFile,
          webhook: 'cluster-hook',
        },
      );
      sample = await addWatch(store, 'sample', [['sha256', sha256]], { file: sampleFile });
      await addWatch(store, 'idle', [['dropped_sha256', '0'.repeat(64)]], { file: join(dir, 'alerts', 'idle.jsonl') });
    } finally {
      await store.close();
    }
    const before = {
      cluster: await counter('sandtrail_watch_hits_total', { watch: 'cluster' }),
      sample: await counter('sandtrail_watch_hits_total', { watch: 'sample' }),
      fileOk: await counter('sandtrail_watch_notifications_total', { channel: 'file', outcome: 'ok' }),
      webhookOk: await counter('sandtrail_watch_notifications_total', { channel: 'webhook', outcome: 'ok' }),
    };

    // the store names the webhook; the backfill's configuration holds its URL
    const webhooks = { 'cluster-hook': `${hook.url}/hooks/T0/s3cr3t?token=abc` };
    const run1 = await backfillInto(storeFile, { webhooks });
    assert.ok(run1.summary.records.indexed > 0);
    const s = openStore(`sqlite:${storeFile}`);
    try {
      const clusterHits = await assertExactHits(s, cluster);
      const sampleHits = await assertExactHits(s, sample);
      assert.ok(clusterHits.length >= 3 && sampleHits.length >= 1, `${clusterHits.length} cluster hits, ${sampleHits.length} sample hits`);
      assert.deepEqual(await s.watches.hits('idle'), []);
      assert.ok(!existsSync(join(dir, 'alerts', 'idle.jsonl')));
      // one JSON line and one POST per hit, carrying the hit as stored
      assert.deepEqual(readLines(clusterFile).sort(byId), clusterHits);
      assert.deepEqual(readLines(sampleFile).sort(byId), sampleHits);
      assert.deepEqual(hook.received.map((r) => r.body as WatchHit).sort(byId), clusterHits);
      assert.ok(hook.received.every((r) => r.path === '/hooks/T0/s3cr3t?token=abc' && r.type === 'application/json'));
      assert.equal(await s.dlq.count({ stage: 'watch' }), 0);
      assert.equal(await counter('sandtrail_watch_hits_total', { watch: 'cluster' }), before.cluster + clusterHits.length);
      assert.equal(await counter('sandtrail_watch_hits_total', { watch: 'sample' }), before.sample + sampleHits.length);
      assert.equal(
        await counter('sandtrail_watch_notifications_total', { channel: 'file', outcome: 'ok' }),
        before.fileOk + clusterHits.length + sampleHits.length,
      );
      assert.equal(
        await counter('sandtrail_watch_notifications_total', { channel: 'webhook', outcome: 'ok' }),
        before.webhookOk + clusterHits.length,
      );

      // the same minutes again under another queue prefix: every chunk is really written again
      const run2 = await backfillInto(storeFile, { queuePrefix: uniquePrefix(), webhooks });
      assert.equal(run2.summary.records.indexed, run1.summary.records.indexed);
      assert.deepEqual((await s.watches.hits('cluster', { limit: 100_000 })).sort(byId), clusterHits);
      assert.deepEqual((await s.watches.hits('sample', { limit: 100_000 })).sort(byId), sampleHits);
      assert.equal(readLines(clusterFile).length, clusterHits.length);
      assert.equal(readLines(sampleFile).length, sampleHits.length);
      assert.equal(hook.received.length, clusterHits.length);
      assert.equal(await counter('sandtrail_watch_hits_total', { watch: 'cluster' }), before.cluster + clusterHits.length);
      assert.equal(
        await counter('sandtrail_watch_notifications_total', { channel: 'webhook', outcome: 'ok' }),
        before.webhookOk + clusterHits.length,
      );
    } finally {
      await s.close();
    }
  });

  test('a webhook answering 500 is retried, then its notification is a watch dead letter WEBHOOK_FAILED; the hit stays recorded', async () => {
    const hook = await receiver(500);
    const storeFile = join(dir, 'failing.db');
    const store = openStore(`sqlite:${storeFile}`);
    let failing: Watch;
    try {
      failing = await addWatch(store, 'failing', [['sha256', sha256]], { webhook: 'failing' });
    } finally {
      await store.close();
    }
    const failedBefore = await counter('sandtrail_watch_notifications_total', { channel: 'webhook', outcome: 'failed' });
    await backfillInto(storeFile, { webhooks: { failing: `${hook.url}/hook/s3cr3t` } });
    const s = openStore(`sqlite:${storeFile}`);
    try {
      const hits = await assertExactHits(s, failing);
      // every hit was tried WEBHOOK_DEFAULTS.attempts (4) times
      assert.equal(hook.received.length, hits.length * 4);
      const dead = await s.dlq.list({ stage: 'watch' });
      assert.deepEqual(
        dead.map((d) => [d.stage, d.code, d.batch, d.docId, d.path]).sort(),
        hits.map((h) => ['watch', 'WEBHOOK_FAILED', 'watch-failing', h.behaviourId, 'webhook']).sort(),
      );
      for (const d of dead) {
        const full = await s.dlq.get(d.id);
        const hit = hits.find((h) => h.behaviourId === d.docId);
        assert.deepEqual(JSON.parse(full!.raw), hit, 'the dead letter keeps the notification');
        assert.match(d.message, /answered 500 \(4 tries\)/);
        assert.ok(!d.message.includes('s3cr3t'), d.message);
      }
      assert.equal(
        await counter('sandtrail_watch_notifications_total', { channel: 'webhook', outcome: 'failed' }),
        failedBefore + hits.length,
      );
    } finally {
      await s.close();
    }
  });

  test('--retro records and notifies hits for what a store held before the watch existed; again, or a live replay, adds none', async () => {
    const hook = await receiver();
    const storeFile = join(dir, 'retro.db');
    copyFileSync(refFile, storeFile);
    const file = join(dir, 'alerts', 'retro.jsonl');
    const store = openStore(`sqlite:${storeFile}`);
    try {
      const w = await addWatch(
        store,
        'retro',
        [
          ['behash', behash],
          ['ja3', ja3],
          ['sha256', sha256],
        ],
        { file, webhook: 'retro-hook' },
      );
      const webhooks = { 'retro-hook': `${hook.url}/r` };
      assert.deepEqual(await store.watches.hits('retro'), []);
      const expected = await expectedMatches(store, w);
      assert.deepEqual(await recordRetroHits(store, w, log, { webhook: { targets: webhooks } }), {
        behaviours: expected.size,
        hits: expected.size,
        undelivered: 0,
        interrupted: false,
      });
      const hits = await assertExactHits(store, w);
      assert.deepEqual(readLines(file).sort(byId), hits);
      assert.deepEqual(hook.received.map((r) => r.body as WatchHit).sort(byId), hits);

      assert.deepEqual(await recordRetroHits(store, w, log, { webhook: { targets: webhooks } }), {
        behaviours: expected.size,
        hits: 0,
        undelivered: 0,
        interrupted: false,
      });
      await backfillInto(storeFile, { queuePrefix: uniquePrefix(), webhooks });
      assert.deepEqual((await store.watches.hits('retro', { limit: 100_000 })).sort(byId), hits);
      assert.equal(readLines(file).length, hits.length);
      assert.equal(hook.received.length, hits.length);
    } finally {
      await store.close();
    }
  });
});
