import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@elastic/elasticsearch';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { backfillExitCode, formatSummary, runBackfillCommand, type BackfillRun } from '../../src/cli/index.js';
import { createLogger } from '../../src/log/index.js';
import { addMinutes, type MinuteId } from '../../src/minute/index.js';
import { openElasticsearchStore } from '../../src/store/index.js';
import { ElasticsearchNode } from '../support/elasticsearchNode.js';
import { tempDir, testConfig } from '../support/env.js';
import { minuteFeeds as feed, until } from '../support/minuteFeeds.js';
import { realCluster, realEsContents } from '../support/realElasticsearch.js';

/**
 * Store faults on a real Elasticsearch node of this file's own (security on, the disk monitor
 * polling every second), since they block or stop the whole node: each gives the exit status and
 * named cause its SQLite counterpart gives (exit 1, the store's fault code, the index named),
 * dead-letters nothing, never marks a minute ok that is not stored, and once the fault is gone a
 * re-run ends exact.
 */
const real = await realCluster();
const skip = 'skip' in real ? real.skip : undefined;
const log = createLogger('silent');
const PASSWORD = 'sandtrail-test-elastic';
const DAY = '20261107';
const WRITER_ROLE = 'sandtrail_test_writer';

/** A writer's role: `behaviours` on the behaviour indices, read and write on the bookkeeping ones. */
function writerRole(prefix: string, behaviours: string[]): Record<string, unknown> {
  return {
    cluster: ['monitor'],
    indices: [
      { names: [`${prefix}-behaviours*`], privileges: behaviours },
      {
        names: [
          `${prefix}-dead-letters`,
          `${prefix}-batches`,
          `${prefix}-private-files`,
          `${prefix}-artefacts`,
          `${prefix}-watch*`,
          `${prefix}-locator`,
        ],
        privileges: ['read', 'write', 'view_index_metadata'],
      },
    ],
  };
}

describe.skipIf(skip !== undefined)(`Elasticsearch store faults on a real node${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let node: ElasticsearchNode;
  let admin: Client;
  let spec = '';
  beforeAll(async () => {
    node = await ElasticsearchNode.start({
      heapMb: 512,
      nodeName: 'faults',
      elasticPassword: PASSWORD,
      users: [{ name: 'hunter', password: 'hunter-password', roles: [WRITER_ROLE] }],
      roles: { [WRITER_ROLE]: writerRole('priv', ['read', 'view_index_metadata']) },
      settings: { 'cluster.info.update.interval': '10s' },
    });
    admin = new Client({ node: node.url, auth: { username: 'elastic', password: PASSWORD } });
    spec = `es:${node.url.replace('http://', `http://elastic:${PASSWORD}@`)}`;
  }, 240_000);
  afterAll(async () => {
    await admin?.close();
    await node?.stop();
  });

  async function run(dir: string, from: MinuteId, minutes: number, prefix: string, store = spec): Promise<BackfillRun> {
    const config = await testConfig(dir, {
      store,
      elasticsearch: { indexPrefix: prefix, replicas: 0, ...(store === spec ? {} : { setup: 'manual' as const }) },
      index: { chunkMaxDocs: 10 },
    });
    return runBackfillCommand({ source: `dir:${dir}`, from, to: addMinutes(from, minutes - 1) }, { config, log });
  }

  /** The batch log's status of each minute, read with the admin's rights. */
  async function statuses(prefix: string, minutes: MinuteId[]): Promise<Map<string, string>> {
    const es = openElasticsearchStore(spec, { indexPrefix: prefix });
    try {
      return new Map((await es.batches.get(minutes)).map((b) => [b.batch, b.status]));
    } finally {
      await es.close();
    }
  }

  async function deadLetters(prefix: string): Promise<number> {
    await admin.indices.refresh({ index: `${prefix}-dead-letters` }, { ignore: [404] });
    return (await admin.count({ index: `${prefix}-dead-letters` }, { ignore: [404] })).count ?? 0;
  }

  /** A first run stores one feed (and so creates the day index); the fault meets a second feed of the same day. */
  async function faultCase(
    prefix: string,
    inject: () => Promise<void>,
    lift: () => Promise<void>,
    cause: RegExp,
    o: { bookkeepingBlocked?: boolean } = {},
  ): Promise<void> {
    const dir = tempDir();
    const first = await feed(dir, `${DAY}0000`, 2, 10, 1);
    assert.equal(backfillExitCode(await run(first.dir, `${DAY}0000`, 2, prefix)), 0);
    const second = await feed(dir, `${DAY}0100`, 3, 10, 2);
    await inject();
    let lifted = false;
    try {
      const r = await run(second.dir, `${DAY}0100`, 3, prefix);
      assert.equal(backfillExitCode(r), 1, formatSummary(r));
      assert.equal(r.summary.batches.ok, 0, formatSummary(r));
      assert.equal(r.summary.records.indexed, 0);
      assert.equal(r.summary.records.rejected, 0, 'the fault is the store’s: no record rejected');
      const named = r.summary.failures.filter((f) => cause.test(f.reason));
      assert.ok(named.length > 0, JSON.stringify(r.summary.failures));
      await lift();
      lifted = true;
      assert.equal(await deadLetters(prefix), 0, 'nothing dead-lettered');
      const minutes = [...second.ids.keys()];
      const s = await statuses(prefix, minutes);
      for (const m of minutes) {
        // where the batch log itself was blocked, the minute has no row rather than a wrong one
        if (o.bookkeepingBlocked) assert.notEqual(s.get(m), 'ok', m);
        else assert.equal(s.get(m), 'failed', m);
      }
      const again = await run(second.dir, `${DAY}0100`, 3, prefix);
      assert.equal(backfillExitCode(again), 0, formatSummary(again));
      const held = await realEsContents(admin, prefix);
      assert.deepEqual(held.ids, [...first.all, ...second.all].sort());
      assert.deepEqual([...(await statuses(prefix, minutes)).values()], ['ok', 'ok', 'ok']);
      assert.equal(await deadLetters(prefix), 0);
    } finally {
      if (!lifted) await lift();
    }
  }

  test('a write block on the day index: STORE_READONLY naming the index, the minutes failed; unblocked, a re-run is exact', () =>
    faultCase(
      'wblock',
      () => admin.indices.putSettings({ index: 'wblock-behaviours-*', settings: { 'index.blocks.write': true } }).then(() => undefined),
      () => admin.indices.putSettings({ index: 'wblock-behaviours-*', settings: { 'index.blocks.write': null } }).then(() => undefined),
      /^STORE_READONLY: index blocked for writes.*wblock-behaviours-2026\.11\.07/,
    ));

  test('a closed day index: STORE_READONLY (index closed) naming it; opened again, a re-run is exact', () =>
    faultCase(
      'closed',
      () => admin.indices.close({ index: `closed-behaviours-2026.11.07` }).then(() => undefined),
      () => admin.indices.open({ index: `closed-behaviours-2026.11.07`, wait_for_active_shards: 1 }).then(() => undefined),
      /^STORE_READONLY: index closed/,
    ));

  test('the flood-stage disk watermark: STORE_FULL; once the disk is below it again, a re-run is exact', () =>
    faultCase(
      'flood',
      async () => {
        // every index on the node gets read_only_allow_delete once the disk monitor sees usage past 1%
        await admin.cluster.putSettings({
          persistent: {
            'cluster.routing.allocation.disk.watermark.low': '1%',
            'cluster.routing.allocation.disk.watermark.high': '1%',
            'cluster.routing.allocation.disk.watermark.flood_stage': '1%',
          },
        });
        await until(async () => {
          const s = await admin.indices.getSettings({ index: 'flood-behaviours-*', name: 'index.blocks.read_only_allow_delete' });
          return Object.values(s).some((x) => x.settings?.index?.blocks?.read_only_allow_delete === 'true');
        }, 'the flood-stage block');
      },
      async () => {
        await admin.cluster.putSettings({
          persistent: {
            'cluster.routing.allocation.disk.watermark.low': null,
            'cluster.routing.allocation.disk.watermark.high': null,
            'cluster.routing.allocation.disk.watermark.flood_stage': null,
          },
        });
        // the node lifts the block itself once usage is under the high watermark again
        await until(async () => {
          const s = await admin.indices.getSettings({ index: 'flood-*', name: 'index.blocks.read_only_allow_delete' });
          return Object.values(s).every((x) => x.settings?.index?.blocks?.read_only_allow_delete !== 'true');
        }, 'the flood-stage block lifted');
      },
      /^STORE_FULL: disk full \(flood-stage disk watermark exceeded/,
      { bookkeepingBlocked: true },
    ));

  test('a user who may read but not write the behaviours: SINK_AUTH per item, the minutes failed, nothing dead-lettered; granted, a re-run is exact', async () => {
    const dir = tempDir();
    const prefix = 'priv';
    const first = await feed(dir, `${DAY}0400`, 2, 10, 5);
    assert.equal(backfillExitCode(await run(first.dir, `${DAY}0400`, 2, prefix)), 0);
    // the file realm's role (this node cannot store native ones), read again by the node within a second
    const role = async (behaviours: string[]): Promise<void> => {
      node.writeRoles({ [WRITER_ROLE]: writerRole(prefix, behaviours) });
      await until(
        async () => {
          const r = await admin.security.hasPrivileges(
            { index: [{ names: [`${prefix}-behaviours-2026.11.07`], privileges: behaviours }] },
            { headers: { authorization: `Basic ${Buffer.from('hunter:hunter-password').toString('base64')}` } },
          );
          return r.has_all_requested;
        },
        `role ${WRITER_ROLE} with ${behaviours.join(', ')}`,
      );
    };
    await role(['read', 'view_index_metadata']);
    const asHunter = `es:${node.url.replace('http://', 'http://hunter:hunter-password@')}`;
    const second = await feed(dir, `${DAY}0500`, 2, 10, 6);
    const r = await run(second.dir, `${DAY}0500`, 2, prefix, asHunter);
    assert.equal(backfillExitCode(r), 1, formatSummary(r));
    assert.equal(r.summary.records.indexed, 0);
    assert.equal(r.summary.records.rejected, 0);
    assert.ok(
      r.summary.failures.length > 0 &&
        r.summary.failures.every((f) => /^SINK_AUTH: Elasticsearch refused the credentials or privileges/.test(f.reason)),
      JSON.stringify(r.summary.failures),
    );
    assert.ok(r.summary.failures.every((f) => !f.reason.includes('hunter-password')));
    assert.equal(await deadLetters(prefix), 0, 'nothing dead-lettered');
    const minutes = [...second.ids.keys()];
    for (const m of minutes) assert.equal((await statuses(prefix, minutes)).get(m), 'failed', m);
    await role(['read', 'write', 'view_index_metadata', 'create_index']);
    const again = await run(second.dir, `${DAY}0500`, 2, prefix, asHunter);
    assert.equal(backfillExitCode(again), 0, formatSummary(again));
    assert.deepEqual((await realEsContents(admin, prefix)).ids, [...first.all, ...second.all].sort());
  });

  test('refused credentials: SINK_AUTH with no secret in the message, nothing written, nothing dead-lettered', async () => {
    const dir = tempDir();
    const f = await feed(dir, `${DAY}0200`, 1, 5, 3);
    const config = await testConfig(dir, {
      store: `es:${node.url.replace('http://', 'http://elastic:not-the-password@')}`,
      elasticsearch: { indexPrefix: 'refused' },
    });
    await assert.rejects(
      runBackfillCommand({ source: `dir:${f.dir}`, from: `${DAY}0200`, to: `${DAY}0200` }, { config, log }),
      (err: Error & { code?: string }) => {
        assert.equal(err.code, 'SINK_AUTH');
        assert.match(err.message, /refused the credentials/);
        assert.ok(!err.message.includes('not-the-password'), err.message);
        return true;
      },
    );
    assert.deepEqual(Object.keys(await admin.indices.get({ index: 'refused-*', allow_no_indices: true })), [], 'nothing created');
  });

  test('the node killed with SIGKILL mid-backfill and started again: the run finishes or fails naming the cause, no minute is ok unless stored, a re-run is exact', async () => {
    const dir = tempDir();
    const start = `${DAY}0300`;
    const f = await feed(dir, start, 12, 40, 4);
    const prefix = 'killed';
    const running = run(f.dir, start, 12, prefix);
    // kill once the first behaviours are stored
    await until(
      async () => {
        const c = await admin.count({ index: `${prefix}-behaviours` }, { ignore: [404] }).catch(() => ({ count: 0 }));
        return (c.count ?? 0) > 0;
      },
      'the first stored behaviours',
      60_000,
      50,
    );
    await node.kill();
    await sleep(2000);
    await node.restart();
    const r = await running;
    if (backfillExitCode(r) !== 0) {
      assert.ok(r.summary.failures.length > 0, formatSummary(r));
      for (const x of r.summary.failures) assert.match(x.reason, /^(SINK_UNAVAILABLE|STORE_|REDIS_)/, x.reason);
    }
    const held = new Set((await realEsContents(admin, prefix)).ids);
    const s = await statuses(prefix, [...f.ids.keys()]);
    for (const [minute, ids] of f.ids) {
      if (s.get(minute) === 'ok') for (const id of ids) assert.ok(held.has(id), `${minute} is ok but ${id} is not stored`);
    }
    const again = await run(f.dir, start, 12, prefix);
    assert.equal(backfillExitCode(again), 0, formatSummary(again));
    assert.deepEqual((await realEsContents(admin, prefix)).ids, f.all);
    assert.deepEqual([...(await statuses(prefix, [...f.ids.keys()])).values()], Array(12).fill('ok'));
    assert.equal(await deadLetters(prefix), 0);
  });
});
