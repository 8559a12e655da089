import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'vitest';
import { runBackfillCommand } from '../../src/cli/index.js';
import { createLogger } from '../../src/log/index.js';
import { processMetrics } from '../../src/metrics/index.js';
import { openStore } from '../../src/store/index.js';
import { writeFeed } from '../../src/synth/index.js';
import { cleanup, tempDir, testConfig } from '../support/env.js';
import { freePort } from '../support/redisServer.js';

/** Every sample of a Prometheus text exposition: `name{labels}` → value. */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    out.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return out;
}

const sum = (m: Map<string, number>, prefix: string): number =>
  [...m].filter(([k]) => k === prefix || k.startsWith(`${prefix}{`)).reduce((n, [, v]) => n + v, 0);

test('/metrics during a real backfill moves as records are indexed and ends equal to the summary; rejected counts by code match the dead letters', async () => {
  const dir = tempDir();
  const manifest = await writeFeed({
    out: join(dir, 'feed'),
    seed: 21,
    start: '202611060000',
    minutes: 16,
    perMinute: 60,
    malformedRate: 0.04,
    bigRate: 0.03,
  });
  const port = await freePort();
  const config = await testConfig(dir, { http: { port }, index: { chunkMaxDocs: 20 } });
  const before = samples(await processMetrics().text());
  const run = runBackfillCommand({ source: `dir:${join(dir, 'feed')}` }, { config, log: createLogger('silent') });
  const seen: number[] = [];
  let scraping = true;
  const scraper = (async () => {
    while (scraping) {
      const r = await fetch(`http://127.0.0.1:${port}/metrics`).catch(() => null);
      if (r?.ok) {
        const m = samples(await r.text());
        seen.push(sum(m, 'sandtrail_records_indexed_total') + sum(m, 'sandtrail_records_stale_total'));
        assert.ok(m.has('sandtrail_process_cpu_seconds_total'), 'default process metrics are there');
        assert.ok([...m.keys()].some((k) => k.startsWith('sandtrail_queue_jobs{queue="index"')));
      }
      await new Promise((res) => setTimeout(res, 30));
    }
  })();
  const { summary } = await run;
  scraping = false;
  await scraper;
  assert.equal(summary.records.indexed, manifest.records);

  const after = samples(await processMetrics().text());
  const delta = (name: string): number => sum(after, name) - sum(before, name);
  // every accepted record was written once: as the newest version, or as a stale older one
  assert.equal(delta('sandtrail_records_indexed_total') + delta('sandtrail_records_stale_total'), summary.records.indexed);
  assert.equal(delta('sandtrail_records_received_total{stage="feed"}'), 16 * 60);
  assert.equal(delta('sandtrail_records_rejected_total'), summary.records.rejected);
  assert.equal(delta('sandtrail_batches_total{outcome="ok"}'), summary.batches.ok);
  assert.ok(delta('sandtrail_decoded_bytes_total') > 0);
  assert.ok(delta('sandtrail_store_write_seconds_count{backend="sqlite"}') > 0);

  // by code, exactly what the dead-letter store holds
  const store = openStore(config.store, config);
  cleanup(() => store.close());
  const byCode = new Map<string, number>();
  for (const d of await store.dlq.list({ limit: 10_000 })) byCode.set(d.code, (byCode.get(d.code) ?? 0) + 1);
  for (const [code, n] of byCode) assert.equal(delta(`sandtrail_records_rejected_total{stage="feed",code="${code}"}`), n, code);

  // scraped while it ran: the figure moved, never backwards, and was below the end for a while
  assert.ok(seen.length >= 2, `scraped ${seen.length} times`);
  for (let i = 1; i < seen.length; i++) assert.ok((seen[i] as number) >= (seen[i - 1] as number));
  const base = sum(before, 'sandtrail_records_indexed_total') + sum(before, 'sandtrail_records_stale_total');
  assert.ok(
    seen.some((v) => v - base > 0 && v - base < summary.records.indexed),
    `intermediate values: ${seen.map((v) => v - base).join(',')}`,
  );
});
