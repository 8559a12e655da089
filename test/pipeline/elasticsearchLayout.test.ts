import assert from 'node:assert/strict';
import { test } from 'vitest';
import { runCli } from '../support/cli.js';
import { tempDir } from '../support/env.js';
import { minuteFeeds } from '../support/minuteFeeds.js';
import { openRealStore, realCluster, realEsContents, type Reachable } from '../support/realElasticsearch.js';

const real = await realCluster();
const skip = 'skip' in real ? real.skip : undefined;

/** The one line a refused start prints on stderr. */
function refusal(stderr: string): string {
  const lines = stderr.split('\n').filter((l) => l.trim() !== '');
  assert.equal(lines.length, 1, `one line naming the cause, got:\n${stderr}`);
  return lines[0] as string;
}

test.skipIf(skip !== undefined)(
  `a writer refuses to start on a real cluster that cannot hold its layout, in one line naming the fix (replicas past the data nodes, a retention window past the shard limit), before it writes anything; the default (auto) replicas run green on one node${skip ? ` (skipped: ${skip})` : ''}`,
  async () => {
    const cluster = real as Reachable;
    const fixture = openRealStore(cluster);
    const { admin, prefix } = fixture;
    try {
      const dir = tempDir();
      const f = await minuteFeeds(dir, '202611120000', 2, 5, 31);
      const dataNodes = (await admin.cluster.health()).number_of_data_nodes;
      const backfill = (env: Record<string, string>): ReturnType<typeof runCli> =>
        runCli(['backfill', '--source', `dir:${f.dir}`, '--store', `es:${cluster.url}`, '--from', '202611120000', '--to', '202611120001'], {
          env: { SANDTRAIL_ELASTICSEARCH_INDEX_PREFIX: prefix, ...env },
        });

      const tooMany = await backfill({ SANDTRAIL_ELASTICSEARCH_REPLICAS: String(dataNodes) });
      assert.notEqual(tooMany.code, 0);
      const line = refusal(tooMany.stderr);
      assert.match(line, new RegExp(`elasticsearch\\.replicas is ${dataNodes} but the cluster has ${dataNodes} data node\\(s\\)`));
      assert.match(line, new RegExp(`set elasticsearch\\.replicas to auto \\(or ${dataNodes - 1}\\), or add data nodes`));

      // 3 primaries a day kept 400 days: 1,203 shards, past the 1,000 a data node holds
      const year = await backfill({ SANDTRAIL_ELASTICSEARCH_SHARDS: '3', SANDTRAIL_RETENTION_DAYS: String(400 * dataNodes) });
      assert.notEqual(year.code, 0);
      const budget = refusal(year.stderr);
      assert.match(budget, /the daily partitions cannot fit the cluster's shard limit: \d+ day indices at 3 shard\(s\)/);
      assert.match(budget, /lower elasticsearch\.shards or elasticsearch\.replicas for new days, shorten retention\.days/);

      // a worker process of a fleet refuses the same way
      const worker = await runCli(['worker', 'index', '--store', `es:${cluster.url}`], {
        env: {
          SANDTRAIL_ELASTICSEARCH_INDEX_PREFIX: prefix,
          SANDTRAIL_ELASTICSEARCH_REPLICAS: String(dataNodes),
          REDIS_URL: process.env.SANDTRAIL_TEST_REDIS_URL ?? '',
        },
      });
      assert.notEqual(worker.code, 0);
      assert.match(refusal(worker.stderr), /elasticsearch\.replicas is \d+ but the cluster has/);

      // nothing was set up or written by the refused starts
      assert.deepEqual(Object.keys(await admin.indices.get({ index: `${prefix}-*`, allow_no_indices: true })), []);

      // the defaults: auto replicas, green on this cluster, every minute stored
      const ok = await backfill({});
      assert.equal(ok.code, 0, ok.stderr);
      const day = `${prefix}-behaviours-2026.11.12`;
      const settings = (await admin.indices.getSettings({ index: day, flat_settings: true }))[day]?.settings as Record<string, string>;
      assert.equal(settings['index.auto_expand_replicas'], '0-1');
      const health = await admin.cluster.health({ index: `${prefix}-*`, wait_for_status: 'green', timeout: '30s' });
      assert.equal(health.status, 'green', `${prefix}-* indices are green with auto replicas on ${dataNodes} data node(s)`);
      assert.deepEqual((await realEsContents(admin, prefix)).ids, f.all);
    } finally {
      await fixture.close();
    }
  },
);
