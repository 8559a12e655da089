import assert from 'node:assert/strict';
import { join } from 'node:path';
import { afterAll, test } from 'vitest';
import { runBackfillCommand } from '../../src/cli/index.js';
import { createLogger } from '../../src/log/index.js';
import { openElasticsearchStore } from '../../src/store/index.js';
import { openStore } from '../../src/store/index.js';
import { writeFeed } from '../../src/synth/index.js';
import { runCli } from '../support/cli.js';
import { tempDir, testConfig } from '../support/env.js';
import { FakeElasticsearch } from '../support/fakeElasticsearch.js';
import { assertNewestWins, expectedDead, storeContents } from '../support/storeContents.js';
import { addMinutes } from '../../src/minute/index.js';

const fake = new FakeElasticsearch();
afterAll(() => fake.close());

test('backfill into Elasticsearch through item 429s, request 503s, a dropped connection and a mapping error keeps the SQLite guarantees; query and get print the same as with SQLite', async () => {
  const url = await fake.listen();
  const dir = tempDir();
  const start = '202611050000';
  const manifest = await writeFeed({
    out: join(dir, 'feed'),
    seed: 23,
    start,
    minutes: 4,
    perMinute: 25,
    malformedRate: 0.05,
    bigRate: 0.05,
  });
  const prefix = 'pipe';
  const index = `${prefix}-behaviours`;
  const log = createLogger('silent');
  const config = await testConfig(dir, { store: `es:${url}`, elasticsearch: { indexPrefix: prefix }, index: { chunkMaxDocs: 9 } });

  // one document the cluster refuses for good, one it pushes back on twice (bulk thread pool full)
  const ids = [...manifest.expectedIds];
  const updated = new Set(manifest.updates.map((u) => u.id));
  const refused = ids.find((id) => !updated.has(id))!;
  const pushedBack = ids.find((id) => id !== refused && !updated.has(id))!;
  fake.failItems(
    (id, index) => id === refused && !index.endsWith('-locator'),
    { status: 400, type: 'document_parsing_exception', reason: '[1:42] failed to parse field [attributes.verdicts] of type [keyword]' },
    1000,
  );
  fake.failItems(
    (id, index) => id === pushedBack && !index.endsWith('-locator'),
    { status: 429, type: 'es_rejected_execution_exception', reason: 'rejected execution of coordinating operation' },
    2,
  );
  // whole bulk requests answered 503 twice, and one connection dropped without an answer
  fake.failRequests({ method: 'POST', path: /_bulk/ }, { status: 503 }, 2);
  fake.failRequests({ method: 'POST', path: /_bulk/ }, 'connection', 1);

  const run1 = await runBackfillCommand({ source: `dir:${join(dir, 'feed')}`, from: start, to: addMinutes(start, 3) }, { config, log });
  assert.deepEqual(run1.summary, {
    batches: { ok: 4, empty: 0, missing: 0, failed: 0, pending: 0 },
    records: { indexed: manifest.records - 1, rejected: manifest.malformedLines + 1 },
    api_units: 0,
    failures: [],
    requeued: 0,
    interrupted: false,
  });
  const stored = (): Map<string, number> => new Map([...fake.docs(index)].map(([id, d]) => [id, d.version]));
  const after1 = stored();
  assert.deepEqual([...after1.keys()].sort(), ids.filter((id) => id !== refused).sort());
  assertNewestWins(manifest, after1);
  for (const [id, d] of fake.docs(index))
    assert.equal(d.source.last_modification_date, after1.get(id), 'external version = last_modification_date');

  const es = openElasticsearchStore(`es:${url}`, { indexPrefix: prefix });
  try {
    const dead = await es.dlq.list({ limit: 10_000 });
    assert.deepEqual(
      dead.filter((d) => d.stage === 'normalize').map((d) => ({ batch: d.batch, line: d.line, stage: d.stage })),
      expectedDead(manifest),
    );
    const rejected = dead.filter((d) => d.stage === 'index');
    assert.equal(rejected.length, 1);
    assert.equal(rejected[0]?.docId, refused);
    assert.equal(rejected[0]?.code, 'document_parsing_exception');
    assert.match(rejected[0]?.message ?? '', /failed to parse field \[attributes\.verdicts\]/);
    const batches = await es.batches.get(manifest.files.map((f) => f.minute));
    assert.deepEqual(
      batches.map((b) => [b.batch, b.status]),
      manifest.files.map((f) => [f.minute, 'ok']),
    );
    // the dashboard's lag fields are stored, not returned
    const rawBatch = fake.docs(`${prefix}-batches`).get(start)?.source;
    assert.equal(rawBatch?.['@timestamp'], Date.parse('2026-11-05T00:00:00Z'));
    assert.equal(typeof rawBatch?.lag_seconds, 'number');
    assert.ok(!('lag_seconds' in (batches[0] ?? {})));

    // a re-run converges: same documents, same versions, same dead letters
    const run2 = await runBackfillCommand({ source: `dir:${join(dir, 'feed')}`, from: start, to: addMinutes(start, 3) }, { config, log });
    assert.deepEqual(run2.summary, run1.summary);
    assert.deepEqual(stored(), after1);
    assert.deepEqual(
      (await es.dlq.list({ limit: 10_000 })).map((d) => d.id),
      dead.map((d) => d.id),
    );
  } finally {
    await es.close();
  }

  // the same feed into SQLite; once the cluster takes the refused document again, a replay makes both stores equal
  const sqliteFile = join(dir, 'same.db');
  const sqliteConfig = await testConfig(dir, { store: `sqlite:${sqliteFile}` });
  await runBackfillCommand({ source: `dir:${join(dir, 'feed')}`, from: start, to: addMinutes(start, 3) }, { config: sqliteConfig, log });
  fake.clearFaults();
  const esEnv = { SANDTRAIL_STORE: `es:${url}`, SANDTRAIL_ELASTICSEARCH_INDEX_PREFIX: prefix };
  const replay = await runCli(['dlq', 'replay', '--all', '--json'], { env: esEnv });
  assert.equal(replay.code, 0, replay.stderr);
  assert.equal((JSON.parse(replay.stdout) as { replayed: number }).replayed, 1);
  await new Promise((r) => setTimeout(r, 300)); // the fake's refresh interval
  assert.deepEqual([...stored().keys()].sort(), storeContents(sqliteFile).ids);

  const sqlite = openStore(`sqlite:${sqliteFile}`);
  const lookups: string[][] = [];
  try {
    for (const [kind, flag] of [
      ['behash', '--behash'],
      ['sigma_rule_id', '--sigma-rule'],
      ['ja3', '--ja3'],
      ['ja3s', '--ja3s'],
      ['dropped_sha256', '--dropped-sha256'],
    ] as const) {
      const top = (await sqlite.sink.top(kind, 1))[0];
      assert.ok(top && top.count > 1, `the feed has a ${kind} cluster`);
      lookups.push(['query', flag, top.value.toUpperCase()], ['query', flag, top.value, '--json']);
    }
  } finally {
    await sqlite.close();
  }
  lookups.push(
    ['query', '--sha256', refused.slice(0, 64)],
    ['get', refused],
    ['get', pushedBack, '--json'],
    ['get', `${'0'.repeat(64)}_Nowhere`],
  );
  for (const args of lookups) {
    const fromEs = await runCli(args, { env: esEnv });
    const fromSqlite = await runCli(args, { env: { SANDTRAIL_STORE: `sqlite:${sqliteFile}` } });
    assert.equal(fromEs.code, fromSqlite.code, args.join(' '));
    assert.equal(fromEs.stdout, fromSqlite.stdout, args.join(' '));
    if (args[0] === 'query') assert.ok(fromEs.stdout.length > 2, `${args.join(' ')} finds something`);
  }
});

test('refused Elasticsearch credentials stop a backfill with one clear error; nothing is dead-lettered for it', async () => {
  const refusing = new FakeElasticsearch();
  try {
    const url = await refusing.listen();
    const dir = tempDir();
    const start = '202611060000';
    await writeFeed({ out: join(dir, 'feed'), seed: 3, start, minutes: 1, perMinute: 5, malformedRate: 0, bigRate: 0 });
    refusing.failRequests({}, { status: 401 }, 1_000_000);
    const config = await testConfig(dir, {
      store: `es:${url.replace('http://', 'http://elastic:hunter2@')}`,
      elasticsearch: { indexPrefix: 'auth' },
    });
    await assert.rejects(
      runBackfillCommand({ source: `dir:${join(dir, 'feed')}`, from: start, to: start }, { config, log: createLogger('silent') }),
      (err: Error & { code?: string }) => {
        assert.equal(err.code, 'SINK_AUTH');
        assert.match(err.message, /refused the credentials/);
        assert.ok(!err.message.includes('hunter2'));
        return true;
      },
    );
    assert.ok(!refusing.requests.some((r) => r.path === '/_bulk' && JSON.stringify(r.body).includes('dead')), 'no dead letter written');
  } finally {
    await refusing.close();
  }
});
