import assert from 'node:assert/strict';
import { describe, test } from 'vitest';
import { errors, type Client } from '@elastic/elasticsearch';
import {
  ElasticsearchSink,
  MAPPING_VERSION,
  ecsProjection,
  kibanaObjects,
  openElasticsearchStore,
  setupElasticsearch,
  setupPlan,
  type ElasticsearchStore,
  type ElasticsearchStoreOptions,
  type RetentionDays,
} from '../../src/store/index.js';
import { FakeElasticsearch, mockedClient } from '../support/fakeElasticsearch.js';
import { makeDoc, sinkDocs } from './sinkConformance.js';
import { TEST_INDEX_LAYOUT, openRealStore, realCluster, type Reachable } from '../support/realElasticsearch.js';

const cluster = await realCluster();

const DAY = 86_400;
/** Midnight UTC of 2026-11-01, in seconds. */
const T0 = 1_793_491_200;
const at = (day: number, hour = 12): number => T0 + day * DAY + hour * 3600;
const dayName = (prefix: string, day: number): string => `${prefix}-behaviours-2026.11.${String(day + 1).padStart(2, '0')}`;
const SHA = (c: string): string => c.repeat(64);

let n = 0;

interface Env {
  fake: FakeElasticsearch;
  client: Client;
  /** Every copy of a behaviour behind the alias: its index and version, by index. */
  copies(id: string): Promise<{ index: string; version: number }[]>;
  /** The indices of the prefix. */
  indices(): Promise<string[]>;
  /** The indices behind the read alias. */
  aliasIndices(): Promise<string[]>;
  prefix: string;
  alias: string;
  /** Another store (another writer process) on the same cluster and prefix. */
  open(o?: ElasticsearchStoreOptions): ElasticsearchStore;
}

/** A fake cluster, an official client on it, and stores under one fresh prefix, all closed afterwards. */
async function withEnv(fn: (e: Env) => Promise<void>): Promise<void> {
  const fake = new FakeElasticsearch();
  const client = mockedClient(fake);
  const prefix = `p${n++}`;
  const stores: ElasticsearchStore[] = [];
  const open = (o: ElasticsearchStoreOptions = {}): ElasticsearchStore => {
    const s = openElasticsearchStore('es:http://localhost:9200', { client, indexPrefix: prefix, refresh: 'wait_for', ...o });
    stores.push(s);
    return s;
  };
  const alias = `${prefix}-behaviours`;
  try {
    await fn({
      fake,
      client,
      prefix,
      alias,
      open,
      copies: async (id) => fake.copies(alias, id),
      indices: async () => fake.indices(),
      aliasIndices: async () => fake.aliasIndices(alias),
    });
  } finally {
    for (const s of stores) await s.close();
    await client.close();
    await fake.close();
  }
}

type Shared = Omit<Env, 'fake'> & { fake?: FakeElasticsearch };

/** The same on the real node: a fresh prefix on the run's cluster, deleted afterwards. */
async function withRealEnv(fn: (e: Shared) => Promise<void>): Promise<void> {
  const fixture = openRealStore(cluster as Reachable);
  const { admin: client, prefix } = fixture;
  const alias = `${prefix}-behaviours`;
  const stores: ElasticsearchStore[] = [];
  const open = (o: ElasticsearchStoreOptions = {}): ElasticsearchStore => {
    const s = openElasticsearchStore(`es:${(cluster as Reachable).url}`, {
      client,
      indexPrefix: prefix,
      refresh: 'wait_for',
      index: TEST_INDEX_LAYOUT,
      ...o,
    });
    stores.push(s);
    return s;
  };
  try {
    await fn({
      client,
      prefix,
      alias,
      open,
      copies: async (id) => {
        await client.indices.refresh({ index: `${prefix}-behaviours*` });
        const r = await client.search({ index: alias, query: { ids: { values: [id] } }, version: true, _source: false });
        return r.hits.hits.map((h) => ({ index: h._index, version: h._version as number })).sort((a, b) => a.index.localeCompare(b.index));
      },
      indices: async () => Object.keys(await client.indices.get({ index: `${prefix}-*` })).sort(),
      aliasIndices: async () => Object.keys(await client.indices.getAlias({ name: alias })).sort(),
    });
  } finally {
    for (const s of stores) await s.close();
    await fixture.close();
  }
}

/** The suites that run on both: the in-memory fake (with its request log) and the real node. */
const BACKENDS: [string, (fn: (e: Shared) => Promise<void>) => Promise<void>][] = [['mock', withEnv]];
if (!('skip' in cluster)) BACKENDS.push(['real cluster', withRealEnv]);

/** What a store with a clock at `nowSec` and `days` of retention looks like. */
function clocked(days: RetentionDays, nowSec: { v: number }): ElasticsearchStoreOptions {
  return { retentionDays: days, now: () => nowSec.v * 1000 };
}

for (const [backend, run] of BACKENDS) {
  describe(`daily partitions: one live document per behaviour (${backend})`, () => {
    test('an update whose day changed moves the behaviour; a stale replay afterwards writes nothing', () =>
      run(async ({ fake, prefix, open, copies }) => {
        const s = open();
        const v1 = makeDoc(SHA('a'), 'Zenbox', at(1), { behash: 'b1' });
        const v2 = makeDoc(SHA('a'), 'Zenbox', at(4), { behash: 'b2' });
        await s.sink.upsert(sinkDocs(v1));
        assert.deepEqual(await copies(v1.id), [{ index: dayName(prefix, 1), version: at(1) }]);
        assert.deepEqual(await s.sink.upsert(sinkDocs(v2)), [{ id: v1.id, status: 'ok' }]);
        assert.deepEqual(await copies(v1.id), [{ index: dayName(prefix, 4), version: at(4) }]);
        // the index action and the delete of the older copy went in one request (the mock keeps the requests)
        const bulks = (): unknown[][] => (fake?.requests ?? []).filter((r) => r.path === '/_bulk').map((r) => r.body as unknown[]);
        if (fake) {
          assert.deepEqual(bulks().at(-1), [
            { index: { _index: dayName(prefix, 4), _id: v1.id, version: at(4), version_type: 'external_gte' } },
            { ...v2, ...ecsProjection(v2) },
            { delete: { _index: dayName(prefix, 1), _id: v1.id, version: at(4), version_type: 'external_gte' } },
          ]);
        }
        const bulksBefore = bulks().length;
        assert.deepEqual(await s.sink.upsert(sinkDocs(v1)), [{ id: v1.id, status: 'ok', stale: true }]);
        assert.equal(bulks().length, bulksBefore, 'a stale replay sends no bulk');
        assert.deepEqual(await copies(v1.id), [{ index: dayName(prefix, 4), version: at(4) }]);
        assert.deepEqual(await s.sink.get(v1.id), v2);
        assert.deepEqual(await s.sink.query('behash', 'b1'), []);
      }));

    test('versions of one behaviour in one call, in different days: only the newest is written, as if written in turn', () =>
      run(async ({ prefix, open, copies, indices }) => {
        const s = open();
        const [v1, v3, v0] = [1, 3, 0].map((d) => makeDoc(SHA('9'), 'Zenbox', at(d), { behash: `v${d}` }));
        assert.deepEqual(await s.sink.upsert(sinkDocs([v1!, v3!, v0!])), [
          { id: v1!.id, status: 'ok' },
          { id: v1!.id, status: 'ok' },
          { id: v1!.id, status: 'ok', stale: true },
        ]);
        assert.deepEqual(await copies(v1!.id), [{ index: dayName(prefix, 3), version: at(3) }]);
        assert.ok(!(await indices()).includes(dayName(prefix, 1)), 'no day index for a version replaced in the same call');
        assert.deepEqual(await s.sink.query('behash', 'v1'), []);
      }));

    test('counts, queries and top values are of distinct behaviours across every partition', () =>
      run(async ({ alias, prefix, open, aliasIndices }) => {
        const s = open();
        const docs = Array.from({ length: 9 }, (_, i) => makeDoc(SHA(String(i)), 'Zenbox', at(i % 3), { behash: 'shared' }));
        await s.sink.upsert(sinkDocs(docs));
        // a third of them updated into a fourth day, in two calls
        await s.sink.upsert(sinkDocs(docs.slice(0, 3).map((d) => makeDoc(d.sha256, 'Zenbox', at(7), { behash: 'moved' }))));
        await s.sink.upsert(sinkDocs(docs.slice(3, 4).map((d) => makeDoc(d.sha256, 'Zenbox', at(8), { behash: 'moved' }))));
        assert.equal((await aliasIndices()).length, 6, 'the undated partition and five days');
        assert.equal(await s.sink.count(), 9);
        assert.equal((await s.sink.query('behash', 'shared')).length, 5);
        assert.deepEqual(await s.sink.top('behash', 5), [
          { value: 'shared', count: 5 },
          { value: 'moved', count: 4 },
        ]);
        assert.equal((await s.hunt.pivotStats('behash', 'moved')).behaviours, 4);
        // the Kibana data view of the behaviours is the alias: every partition, present and future
        const views = kibanaObjects(prefix).filter((o) => o.type === 'index-pattern' && String(o.attributes.title).includes('behaviours'));
        assert.deepEqual(
          views.map((v) => v.attributes.title),
          [alias],
        );
        // a single-document GET through the alias is refused once it spans several indices; the sink's get is not
        await assert.rejects(
          s.client.get({ index: alias, id: docs[0]!.id }),
          (err: unknown) => err instanceof errors.ResponseError && /more than one index/.test(JSON.stringify(err.body)),
        );
        assert.equal((await s.sink.get(docs[0]!.id))?.last_modification_date, at(7));
      }));

    test('a day index created by one writer is seen by another writer: at once when it creates one itself, else at its next call', () =>
      run(async ({ client, prefix, open, copies }) => {
        const a = open();
        const b = open();
        const x = (day: number): ReturnType<typeof makeDoc> => makeDoc(SHA('c'), 'Zenbox', at(day), {});
        await a.sink.upsert(sinkDocs(makeDoc(SHA('b'), 'Zenbox', at(1), {}))); // a lists the partitions (and caches them)
        await b.sink.upsert(sinkDocs(x(2))); // b creates day 2
        // a creates day 3: the list it reads again after that shows day 2, which it looks up too
        await a.sink.upsert(sinkDocs(x(3)));
        assert.deepEqual(await copies(x(3).id), [{ index: dayName(prefix, 3), version: at(3) }]);
        // without a creation of its own, a writer sees a new day once its list is a moment old
        const c = new ElasticsearchSink(client, { prefix, refresh: 'wait_for', partitionsCacheMs: 50 });
        await c.upsert(sinkDocs(makeDoc(SHA('d'), 'Zenbox', at(3), {})));
        await b.sink.upsert(sinkDocs(makeDoc(SHA('e'), 'Zenbox', at(5), {})));
        await new Promise((r) => setTimeout(r, 60));
        assert.deepEqual(await c.upsert(sinkDocs(makeDoc(SHA('e'), 'Zenbox', at(3), {}))), [
          { id: `${SHA('e')}_Zenbox`, status: 'ok', stale: true },
        ]);
        assert.deepEqual(await copies(`${SHA('e')}_Zenbox`), [{ index: dayName(prefix, 5), version: at(5) }]);
      }));

    test('a store from before the locator: writes look up every partition until es setup records every stored copy; then an update finds its older copy through the locator, which retention empties with the days', () =>
      run(async ({ client, prefix, open, copies, aliasIndices }) => {
        const locator = `${prefix}-locator`;
        const state = async (): Promise<unknown> =>
          ((await client.indices.getMapping({ index: locator }))[locator]?.mappings?._meta as { complete?: unknown } | undefined)?.complete;
        const old = [1, 2, 3].map((d) => makeDoc(SHA(String(d)), 'Zenbox', at(d), {}));
        await open().sink.upsert(sinkDocs(old));
        assert.equal(await state(), true, 'a new store: complete from its setup');
        // the store as a release before the locator left it
        await client.indices.delete({ index: locator });
        await client.indices.deleteIndexTemplate({ name: locator });
        // a writer of this release: its setup makes the locator again, not filled (it holds behaviours)
        const moved = makeDoc(SHA('1'), 'Zenbox', at(4), {});
        assert.deepEqual(await open().sink.upsert(sinkDocs(moved)), [{ id: moved.id, status: 'ok' }]);
        assert.equal(await state(), false);
        assert.deepEqual(await copies(moved.id), [{ index: dayName(prefix, 4), version: at(4) }], 'found by the lookup of every partition');
        // es setup records every copy the partitions hold and marks the locator complete
        const r = await setupElasticsearch(client, { prefix, fillLocator: true });
        assert.ok(
          r.applied.includes(`locator ${locator} complete (3 stored behaviour copies recorded)`),
          r.applied.filter((a) => a.startsWith('locator')).join('; '),
        );
        assert.equal(await state(), true);
        const entry = async (id: string): Promise<unknown> => (await client.get({ index: locator, id }))._source;
        assert.deepEqual(await entry(old[1]!.id), { indices: [dayName(prefix, 2)], last_day: at(2, 0) });
        // a writer trusting the locator alone finds day 2's copy of this behaviour and removes it
        const update = makeDoc(SHA('2'), 'Zenbox', at(5), {});
        assert.deepEqual(await open().sink.upsert(sinkDocs(update)), [{ id: update.id, status: 'ok' }]);
        assert.deepEqual(await copies(update.id), [{ index: dayName(prefix, 5), version: at(5) }]);
        assert.deepEqual(await entry(update.id), { indices: [dayName(prefix, 2), dayName(prefix, 5)], last_day: at(5, 0) });
        // retention: days 1-3 go with their entries (every partition they list is gone); day 4's stays
        // (entries written a refresh interval before, as they are by the time their days expire)
        await client.indices.refresh({ index: locator });
        const pruned = await open().retention.prune({ behavioursBefore: at(4, 0) });
        assert.deepEqual(
          pruned.partitions.sort(),
          [1, 2, 3].map((d) => dayName(prefix, d)),
        );
        assert.deepEqual(await aliasIndices(), [`${prefix}-behaviours-000001`, dayName(prefix, 4), dayName(prefix, 5)]);
        await client.indices.refresh({ index: locator });
        const left = (await client.search({ index: locator, size: 10, _source: false })).hits.hits.map((h) => h._id).sort();
        assert.deepEqual(left, [moved.id, update.id].sort());
      }));

    test('duplicates left by a race are removed by the next write of that behaviour, a stale replay included', () =>
      run(async ({ client, prefix, open, copies }) => {
        const s = open();
        const v1 = makeDoc(SHA('d'), 'Zenbox', at(1), {});
        const v2 = makeDoc(SHA('d'), 'Zenbox', at(2), {});
        await s.sink.upsert(sinkDocs(makeDoc(SHA('e'), 'Zenbox', at(2), {}))); // day 2 exists
        await s.sink.upsert(sinkDocs(v1));
        // the race's outcome: v2 stored in day 2 by a writer that did not see day 1's copy; it
        // recorded day 2 in the locator first, as every writer does before it writes
        await client.index({
          index: `${prefix}-locator`,
          id: v2.id,
          document: { indices: [dayName(prefix, 1), dayName(prefix, 2)], last_day: at(2) - (at(2) % 86_400) },
          refresh: true,
        });
        await client.index({
          index: dayName(prefix, 2),
          id: v2.id,
          document: v2,
          version: at(2),
          version_type: 'external_gte',
          refresh: true,
        });
        assert.equal((await copies(v1.id)).length, 2);
        assert.deepEqual(await s.sink.upsert(sinkDocs(v1)), [{ id: v1.id, status: 'ok', stale: true }]);
        assert.deepEqual(await copies(v1.id), [{ index: dayName(prefix, 2), version: at(2) }]);
        assert.equal(await s.sink.count(), 2);
      }));
  });
}

describe('daily partitions: what only the mock can stage (an item refused, a writer racing inside a bulk)', () => {
  test('when the newest version of a call is refused, the one it replaced is retryable and stored on its own next', () =>
    withEnv(async ({ fake, alias, prefix, open }) => {
      const s = open();
      const [v1, v3] = [1, 3].map((d) => makeDoc(SHA('8'), 'Zenbox', at(d), { behash: `v${d}` }));
      // the first item of this id the cluster sees (the newest: the only one sent) is refused for good
      fake.failItems(
        (id, index) => id === v1!.id && !index.endsWith('-locator'),
        { status: 400, type: 'document_parsing_exception', reason: 'failed to parse' },
        1,
      );
      const first = await s.sink.upsert(sinkDocs([v1!, v3!]));
      assert.equal(first[1]?.status, 'rejected');
      assert.deepEqual([first[0]?.status, first[0]?.status === 'retryable' && first[0].code], ['retryable', 'newer_version_failed']);
      // what the index stage does with a retryable item: write it again, alone
      assert.deepEqual(await s.sink.upsert(sinkDocs([v1!])), [{ id: v1!.id, status: 'ok' }]);
      assert.deepEqual(fake.copies(alias, v1!.id), [{ index: dayName(prefix, 1), version: at(1) }]);
    }));

  test('a newer copy written meanwhile where this write deletes an older one (a writer of the previous release, before es setup filled the locator): this write removes its own copy and is stale', () =>
    withEnv(async ({ fake, client, alias, prefix, open }) => {
      await previousLayout(client, prefix);
      const v1 = makeDoc(SHA('f'), 'Zenbox', at(1), {});
      await client.index({ index: alias, id: v1.id, document: v1, version: at(1), version_type: 'external_gte', refresh: true });
      // a writer's own setup: the locator is created, not filled, so writes look up every partition
      await setupElasticsearch(client, { prefix, keepDeployment: true });
      const s = open();
      // the previous release's writer stores v3 through the write alias just before this writer's bulk
      const v3 = makeDoc(SHA('f'), 'Zenbox', at(4), {});
      const handle = fake.handle.bind(fake);
      let raced = false;
      fake.handle = (req) => {
        // the behaviours' bulk (the locator's record before it goes to /<locator>/_bulk)
        if (!raced && req.method === 'POST' && req.path.startsWith('/_bulk')) {
          raced = true;
          const action = { index: { _index: alias, _id: v3.id, version: at(4), version_type: 'external_gte', require_alias: true } };
          handle({ method: 'POST', path: '/_bulk?refresh=true', body: `${JSON.stringify(action)}\n${JSON.stringify(v3)}\n` });
        }
        return handle(req);
      };
      const v2 = makeDoc(SHA('f'), 'Zenbox', at(2), {});
      assert.deepEqual(await s.sink.upsert(sinkDocs(v2)), [{ id: v1.id, status: 'ok', stale: true }]);
      assert.ok(raced);
      assert.deepEqual(fake.copies(alias, v1.id), [{ index: `${prefix}-behaviours-000001`, version: at(4) }]);
      assert.equal(await s.sink.count(), 1);
    }));
});

describe('daily partitions: lifecycle and retention (mock)', () => {
  test('setup installs a validated policy; every day index gets it, its age from its name, the layout and the read alias', () =>
    withEnv(async ({ fake, client, alias, prefix, open }) => {
      const s = open({ retentionDays: 30, index: { shards: 3, replicas: 0 } });
      await s.sink.upsert(sinkDocs(makeDoc(SHA('a'), 'Zenbox', Math.floor(Date.now() / 1000), {})));
      assert.deepEqual(fake.policies()[`${prefix}-behaviours`], {
        _meta: { managed_by: 'sandtrail', mapping_version: MAPPING_VERSION },
        phases: {
          hot: { min_age: '0ms', actions: { set_priority: { priority: 100 } } },
          delete: { min_age: '31d', actions: { delete: {} } },
        },
      });
      const day = fake.aliasIndices(alias).find((i) => i !== `${prefix}-behaviours-000001`) as string;
      assert.match(day, new RegExp(`^${prefix}-behaviours-\\d{4}\\.\\d{2}\\.\\d{2}$`));
      const index = (fake.settings(day) as { index: Record<string, unknown> }).index;
      assert.deepEqual(index.lifecycle, { name: `${prefix}-behaviours`, parse_origination_date: 'true' });
      assert.equal(index.number_of_shards, '3');
      assert.equal(index.number_of_replicas, '0');
      assert.deepEqual(fake.aliases(day), { [alias]: {} }, 'a read alias: no write index');
      // the undated partition stays out of ILM (its name carries no date)
      const undated = (fake.settings(`${prefix}-behaviours-000001`) as { index: Record<string, unknown> }).index;
      assert.deepEqual(undated.lifecycle, { name: '', parse_origination_date: 'false' });
      // the fake refuses what Elasticsearch refuses: an index of the pattern whose name has no date, a policy out of schema
      await assert.rejects(client.indices.create({ index: `${prefix}-behaviours-misc` }), /does not match pattern/);
      const bad = async (policy: Record<string, unknown>, why: RegExp): Promise<void> => {
        await assert.rejects(client.ilm.putLifecycle({ name: 'bad', policy } as never), why);
      };
      await bad(
        { phases: { delete: { min_age: '10d', actions: { rollover: { max_age: '1d' } } } } },
        /invalid action \[rollover\] defined in phase \[delete\]/,
      );
      await bad({ phases: { later: { actions: {} } } }, /does not support phase \[later\]/);
      await bad({ phases: { delete: { min_age: 'soon', actions: { delete: {} } } } }, /unit is missing or unrecognized/);
      await bad(
        { phases: { warm: { min_age: '10d', actions: {} }, delete: { min_age: '5d', actions: { delete: {} } } } },
        /before the warm phase/,
      );
      await bad({ phases: { hot: { actions: { forcemerge: { max_num_segments: 1 } } } } }, /without an accompanying \[rollover\]/);
    }));

  test("a writer's own setup keeps the deployment's retention and shard layout; es setup changes them; an older version's are brought up to date", () =>
    withEnv(async ({ fake, client, prefix, open }) => {
      const name = `${prefix}-behaviours`;
      const deleteAge = (): unknown => (fake.policies()[name] as { phases: { delete?: { min_age: string } } }).phases.delete?.min_age;
      const replicas = async (): Promise<unknown> => {
        const t = (await client.cluster.getComponentTemplate({ name: `${name}-settings` })).component_templates[0];
        return (t?.component_template.template.settings as { index?: { number_of_replicas?: unknown } }).index?.number_of_replicas;
      };
      const write = async (s: ElasticsearchStore, c: string): Promise<void> => {
        assert.equal((await s.sink.upsert(sinkDocs(makeDoc(SHA(c), 'Zenbox', Math.floor(Date.now() / 1000), {}))))[0]?.status, 'ok');
      };
      const deployed = await setupElasticsearch(client, { prefix, retentionDays: 30, replicas: 0 });
      assert.deepEqual(deployed.kept, []);
      assert.deepEqual([deleteAge(), await replicas()], ['31d', 0]);
      // a backfill from another configuration (retention off, the default replicas) writes, and changes neither
      await write(open({ retentionDays: 'off' }), 'a');
      assert.deepEqual([deleteAge(), await replicas()], ['31d', 0]);
      // es setup is the one that changes them
      const changed = await setupElasticsearch(client, { prefix, retentionDays: 'off', replicas: 1 });
      assert.deepEqual([deleteAge(), await replicas(), changed.kept], [undefined, 1, []]);
      await client.transport.request({
        method: 'PUT',
        path: `/_ilm/policy/${name}`,
        body: { policy: { phases: { hot: { actions: {} } } } },
      });
      // a policy an older version wrote (no version in its _meta) is brought up to date
      await write(open({ retentionDays: 7 }), 'b');
      assert.equal(deleteAge(), '8d');
      const kept = await setupElasticsearch(client, { prefix, retentionDays: 'off', keepDeployment: true });
      assert.equal(kept.kept.length, 2, JSON.stringify(kept.kept));
      assert.equal(deleteAge(), '8d');
    }));

  test('ILM deletes a day index once its whole day is past retention, the same moment prune does; a newer version in a later day stays', () =>
    withEnv(async ({ fake, alias, prefix, open }) => {
      const now = { v: at(3) };
      const s = open(clocked(5, now));
      const moved = makeDoc(SHA('a'), 'Zenbox', at(1), {});
      const old = makeDoc(SHA('b'), 'Zenbox', at(1, 23), {});
      await s.sink.upsert(sinkDocs([moved, old]));
      now.v = at(5);
      await s.sink.upsert(sinkDocs(makeDoc(SHA('a'), 'Zenbox', at(4), {})));
      // day 1 ends at day 2 00:00; its last behaviour expires 5 days later (prune's cutoff is that moment less the 5 days)
      const end = T0 + 2 * DAY + 5 * DAY;
      assert.deepEqual(fake.runLifecycle((end - 1) * 1000), []);
      const dry = await s.retention.prune({ behavioursBefore: end - 1 - 5 * DAY, dryRun: true });
      assert.deepEqual([dry.partitions, dry.behaviours], [[], 0]);
      const due = await s.retention.prune({ behavioursBefore: end - 5 * DAY, dryRun: true });
      assert.deepEqual([due.partitions, due.behaviours], [[dayName(prefix, 1)], 1]);
      assert.deepEqual(fake.runLifecycle(end * 1000), [dayName(prefix, 1)]);
      assert.equal(await s.sink.get(old.id), null);
      assert.equal((await s.sink.get(moved.id))?.last_modification_date, at(4));
      assert.equal(await s.sink.count(), 1);
      assert.deepEqual(fake.aliasIndices(alias), [`${prefix}-behaviours-000001`, dayName(prefix, 4)]);
      // a write already past retention does not bring the day back
      now.v = end;
      assert.deepEqual(await s.sink.upsert(sinkDocs(old)), [{ id: old.id, status: 'ok', stale: true, expired: true }]);
      assert.ok(!fake.indices().includes(dayName(prefix, 1)));
    }));
});

/** The single-index layout of the previous release: write alias on `<prefix>-behaviours-000001`, no lifecycle. */
async function previousLayout(client: Client, prefix: string): Promise<void> {
  for (const step of setupPlan({ prefix })) {
    if (step.path.startsWith('/_ilm/') || step.when === 'exists') continue;
    let body = step.body;
    if (step.path === `/_index_template/${prefix}-behaviours`) {
      body = {
        ...body,
        version: 1,
        _meta: { managed_by: 'sandtrail', mapping_version: 1, description: 'sandtrail behaviour reports; write through the alias' },
      };
      delete body.template;
    }
    if (step.path === `/${prefix}-behaviours-000001`) body = { aliases: { [`${prefix}-behaviours`]: { is_write_index: true } } };
    await client.transport.request({ method: step.method, path: step.path, body });
  }
}

describe('daily partitions: upgrade of a single-index deployment (mock)', () => {
  test('the old index stays as the undated partition; an update moves its behaviour out; counts stay distinct; prune thins it by date', () =>
    withEnv(async ({ fake, client, alias, prefix, open }) => {
      await previousLayout(client, prefix);
      const old = [1, 2, 9].map((d, i) => makeDoc(SHA(String(i)), 'Zenbox', at(d), { behash: 'legacy' }));
      // the previous sink: external_gte index actions through the write alias
      await client.bulk({
        refresh: true,
        operations: old.flatMap((d) => [
          { index: { _index: alias, _id: d.id, version: d.last_modification_date, version_type: 'external_gte', require_alias: true } },
          { ...d, ...ecsProjection(d) },
        ]),
      });
      assert.equal(fake.docs(`${prefix}-behaviours-000001`).size, 3);

      const r = await setupElasticsearch(client, { prefix, retentionDays: 5 });
      assert.deepEqual(
        r.created.filter((c) => c.includes('behaviours')),
        [],
      );
      assert.ok(r.applied.includes(`mapping upgrade of the indices behind ${alias} (additive)`));
      assert.ok(fake.policies()[`${prefix}-behaviours`]);

      const now = { v: at(10) };
      const s = open({ ...clocked(5, now), autoSetup: false });
      const updated = makeDoc(old[0]!.sha256, 'Zenbox', at(8), { behash: 'new' });
      assert.deepEqual(await s.sink.upsert(sinkDocs([updated, old[1]!])), [
        { id: updated.id, status: 'ok' },
        { id: old[1]!.id, status: 'ok', stale: true, expired: true },
      ]);
      assert.deepEqual(fake.copies(alias, updated.id), [{ index: dayName(prefix, 8), version: at(8) }]);
      assert.equal(await s.sink.count(), 3);
      assert.deepEqual(await s.sink.query('behash', 'legacy'), [old[1]!.id, old[2]!.id].sort());
      assert.equal((await s.sink.get(updated.id))?.last_modification_date, at(8));

      // the undated partition is thinned by date (day 2's behaviour is past a day-5 cutoff, day 9's is not)
      const report = await s.retention.prune({ behavioursBefore: at(5) });
      assert.deepEqual([report.behaviours, report.partitions, report.done], [1, [], true]);
      assert.equal(await s.sink.get(old[1]!.id), null);
      assert.equal(await s.sink.count(), 2);
      assert.deepEqual(fake.aliasIndices(alias), [`${prefix}-behaviours-000001`, dayName(prefix, 8)]);
    }));
});

describe('daily partitions: setup manual (mock)', () => {
  test("a missing alias, or a template that predates daily partitions, is the store's fault naming es setup; es setup repairs both", () =>
    withEnv(async ({ fake, client, alias, prefix, open }) => {
      const s = open({ autoSetup: false });
      const doc = makeDoc(SHA('c'), 'Zenbox', at(3), {});
      await assert.rejects(s.sink.upsert(sinkDocs(doc)), (err: Error & { code?: string }) => {
        assert.equal(err.code, 'STORE_READONLY');
        assert.match(err.message, new RegExp(`index missing: .*${alias}.*run sandtrail es setup`));
        return true;
      });
      // the previous release's setup: its template makes day indices without the alias or the policy
      await previousLayout(client, prefix);
      await assert.rejects(s.sink.upsert(sinkDocs(doc)), (err: Error & { code?: string }) => {
        assert.equal(err.code, 'STORE_READONLY');
        assert.match(
          err.message,
          new RegExp(
            `index template ${prefix}-behaviours is missing or predates daily partitions: day index ${dayName(prefix, 3)}.*run sandtrail es setup`,
          ),
        );
        return true;
      });
      assert.ok(fake.indices().includes(dayName(prefix, 3)));
      const r = await setupElasticsearch(client, { prefix });
      assert.ok(
        r.applied.some((a) => a.startsWith(`deleted empty day index ${dayName(prefix, 3)}`)),
        r.applied.join('\n'),
      );
      assert.deepEqual(await s.sink.upsert(sinkDocs(doc)), [{ id: doc.id, status: 'ok' }]);
      assert.deepEqual(fake.aliases(dayName(prefix, 3)), { [alias]: {} });
    }));

  test('a day index outside the alias that holds documents is attached to the alias and the policy by es setup', () =>
    withEnv(async ({ fake, client, alias, prefix }) => {
      await previousLayout(client, prefix);
      const doc = makeDoc(SHA('d'), 'Zenbox', at(6), {});
      // written by something else than a writer (which never writes outside the alias)
      await client.index({
        index: dayName(prefix, 6),
        id: doc.id,
        document: doc,
        version: at(6),
        version_type: 'external_gte',
        refresh: true,
      });
      const r = await setupElasticsearch(client, { prefix, retentionDays: 10 });
      assert.ok(r.applied.includes(`attached day index ${dayName(prefix, 6)} (1 documents) to ${alias} and policy ${prefix}-behaviours`));
      assert.deepEqual(fake.aliases(dayName(prefix, 6)), { [alias]: {} });
      const index = (fake.settings(dayName(prefix, 6)) as { index: Record<string, unknown> }).index;
      assert.deepEqual(index.lifecycle, { name: `${prefix}-behaviours`, parse_origination_date: 'true' });
      assert.deepEqual(fake.runLifecycle((T0 + 7 * DAY + 11 * DAY) * 1000), [dayName(prefix, 6)]);
    }));
});
