import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'vitest';
import { backfillExitCode, runBackfillCommand } from '../../src/cli/index.js';
import { createLogger } from '../../src/log/index.js';
import { addMinutes } from '../../src/minute/index.js';
import { openElasticsearchStore, openStore } from '../../src/store/index.js';
import { writeFeed } from '../../src/synth/index.js';
import { runCli, startCli } from '../support/cli.js';
import { cleanup, tempDir, testConfig } from '../support/env.js';
import { openRealStore, realCluster, realEsContents, type Reachable } from '../support/realElasticsearch.js';
import { assertNewestWins, expectedDead, storeContents } from '../support/storeContents.js';

/**
 * One feed (updates, malformed lines, big reports) backfilled into the real Elasticsearch node and
 * into SQLite: both stores must end holding the same behaviours at the same versions, the same
 * dead letters and batch log, and every hunting read of the CLI must print the same on both.
 */
const real = await realCluster();
const skip = 'skip' in real ? real.skip : undefined;
const log = createLogger('silent');

test.skipIf(skip !== undefined)(
  `backfill --store es: on a real node stores what SQLite stores, and pivot, top, related, file, query, get and serve's read API answer the same${skip ? ` (skipped: ${skip})` : ''}`,
  async () => {
    const cluster = real as Reachable;
    const dir = tempDir();
    const start = '202611050000';
    const manifest = await writeFeed({
      out: join(dir, 'feed'),
      seed: 29,
      start,
      minutes: 4,
      perMinute: 30,
      malformedRate: 0.05,
      bigRate: 0.05,
    });
    const fixture = openRealStore(cluster);
    const prefix = fixture.prefix;
    const esSpec = `es:${cluster.url}`;
    const admin = fixture.admin;
    try {
      const range = { source: `dir:${join(dir, 'feed')}`, from: start, to: addMinutes(start, 3) };
      const esConfig = await testConfig(dir, { store: esSpec, elasticsearch: { indexPrefix: prefix }, index: { chunkMaxDocs: 9 } });
      const run1 = await runBackfillCommand(range, { config: esConfig, log });
      assert.equal(backfillExitCode(run1), 0, JSON.stringify(run1.summary.failures));
      assert.deepEqual(run1.summary.batches, { ok: 4, empty: 0, missing: 0, failed: 0, pending: 0 });
      assert.deepEqual(run1.summary.records, { indexed: manifest.records, rejected: manifest.malformedLines });

      const sqliteFile = join(dir, 'same.db');
      const sqliteConfig = await testConfig(dir, { store: `sqlite:${sqliteFile}` });
      const runS = await runBackfillCommand(range, { config: sqliteConfig, log });
      assert.deepEqual(runS.summary, run1.summary);

      const fromEs = await realEsContents(admin, prefix);
      const fromSqlite = storeContents(sqliteFile);
      assert.deepEqual(fromEs.ids, [...manifest.expectedIds].sort());
      assert.deepEqual(fromEs.ids, fromSqlite.ids);
      assert.deepEqual(fromEs.lmd, fromSqlite.lmd, 'the stored version is last_modification_date, as in SQLite');
      assertNewestWins(manifest, fromEs.lmd);
      assert.deepEqual(fromEs.dead, expectedDead(manifest));
      assert.deepEqual(fromEs.dead, fromSqlite.dead);

      // the batch log and the dead letters, as the stores' own readers give them
      const es = openElasticsearchStore(esSpec, { indexPrefix: prefix });
      const sqlite = openStore(`sqlite:${sqliteFile}`);
      try {
        const minutes = manifest.files.map((f) => f.minute);
        const rows = async (s: typeof es | typeof sqlite): Promise<unknown[]> =>
          (await s.batches.get(minutes)).map((b) => [b.batch, b.status, b.accepted, b.rejected]);
        assert.deepEqual(await rows(es), await rows(sqlite));
        const letters = async (s: typeof es | typeof sqlite): Promise<unknown[]> => {
          const out: unknown[] = [];
          for (const d of await s.dlq.list({ limit: 10_000 })) {
            const full = await s.dlq.get(d.id);
            out.push([d.id, d.batch, d.line, d.stage, d.code, d.message, full?.raw]);
          }
          return out;
        };
        assert.deepEqual(await letters(es), await letters(sqlite));

        // a re-run converges: the same documents at the same versions, no duplicate anywhere
        const run2 = await runBackfillCommand(range, { config: esConfig, log });
        assert.deepEqual(run2.summary, run1.summary);
        assert.deepEqual(await realEsContents(admin, prefix), fromEs);

        // every hunting read of the CLI prints the same from both stores
        const reads: string[][] = [];
        for (const [kind, flag, top] of [
          ['behash', '--behash', 'behash'],
          ['sigma_rule_id', '--sigma-rule', 'sigma-rule'],
          ['ja3', '--ja3', 'ja3'],
          ['ja3s', '--ja3s', 'ja3s'],
          ['dropped_sha256', '--dropped-sha256', 'dropped-sha256'],
        ] as const) {
          const value = (await sqlite.sink.top(kind, 1))[0];
          assert.ok(value && value.count > 1, `the feed has a ${kind} cluster`);
          reads.push(
            ['query', flag, value.value.toUpperCase()],
            ['pivot', flag, value.value, '--json'],
            ['top', top, '--limit', '5', '--json'],
          );
        }
        const someId = fromEs.ids[0] as string;
        const sha = someId.slice(0, 64);
        reads.push(['file', sha, '--json'], ['query', '--sha256', sha], ['get', someId, '--json'], ['get', `${'0'.repeat(64)}_Nowhere`]);
        for (const args of reads) {
          const a = await runCli([...args, '--store', esSpec], { env: { SANDTRAIL_ELASTICSEARCH_INDEX_PREFIX: prefix } });
          const b = await runCli([...args, '--store', `sqlite:${sqliteFile}`]);
          assert.equal(a.code, b.code, `${args.join(' ')}: ${a.stderr}`);
          assert.equal(a.stdout, b.stdout, args.join(' '));
          if (args[0] !== 'get' || !args[1]?.startsWith('000')) assert.ok(a.stdout.length > 2, `${args.join(' ')} finds something`);
          // the behaviours a pivot finds: what each shares with the others
          const first = args[0] === 'query' ? a.stdout.split('\n')[0] : undefined;
          if (first) reads.push(['related', first, '--json']);
        }

        // serve's read API over each store answers the same for the same requests
        const [esApi, sqliteApi] = await Promise.all([
          serveApi(['--store', esSpec], { SANDTRAIL_ELASTICSEARCH_INDEX_PREFIX: prefix }),
          serveApi(['--store', `sqlite:${sqliteFile}`], {}),
        ]);
        const behash = (await sqlite.sink.top('behash', 1))[0]?.value as string;
        const paths = [
          `/api/v3/sandtrail/pivots/behash/${behash}`,
          '/api/v3/sandtrail/top/behash?limit=5',
          '/api/v3/sandtrail/top/sigma_rule_id?limit=5',
          `/api/v3/file_behaviours/${encodeURIComponent(someId)}`,
          `/api/v3/files/${sha}/behaviours`,
          `/api/v3/sandtrail/related/${encodeURIComponent(someId)}`,
          `/api/v3/sandtrail/files/${sha}`,
          `/api/v3/file_behaviours/${'0'.repeat(64)}_Nowhere`,
        ];
        for (const path of paths) {
          const [a, b] = await Promise.all([fetch(esApi + path), fetch(sqliteApi + path)]);
          const [ta, tb] = [await a.text(), await b.text()];
          assert.equal(a.status, b.status, path);
          // links carry each server's own address
          assert.equal(ta.split(esApi).join('<api>'), tb.split(sqliteApi).join('<api>'), path);
        }
      } finally {
        await es.close();
        await sqlite.close();
      }
    } finally {
      await fixture.close();
    }
  },
);

/** `serve` on a free port over the given store; the API's base URL once it listens (stopped when the test ends). */
async function serveApi(args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  const cli = startCli(['serve', '--port', '0', ...args], { REDIS_URL: '', SANDTRAIL_REDIS_URL: '', SANDTRAIL_LOG_LEVEL: 'warn', ...env });
  cleanup(() => cli.child.kill('SIGKILL'));
  let err = '';
  cli.child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  for (let i = 0; i < 600 && !/API base (http:\/\/127\.0\.0\.1:\d+)/.test(err); i++) await new Promise((r) => setTimeout(r, 50));
  const base = /API base (http:\/\/127\.0\.0\.1:\d+)/.exec(err)?.[1];
  assert.ok(base, err);
  return base;
}
