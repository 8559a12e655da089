import assert from 'node:assert/strict';
import { describe, test as vitestTest } from 'vitest';
import { errorCode, isRetryable } from '../../src/errors/index.js';
import type { Watch, WatchHit, WatchStore } from '../../src/store/index.js';

export interface WatchStoreFixture {
  watches: WatchStore;
  close(): Promise<void>;
}

const hex = (c: string, n: number): string => c.repeat(n);
/** When the fixtures' watches were created: the watch a hit names. */
const CREATED = 1_700_000_000_000;
/** A behaviour id as the feed has them: sample sha256, `_`, sandbox name (spaces included). */
const behaviourId = (c: string, sandbox = 'VirusTotal Jujubox'): string => `${hex(c, 64)}_${sandbox}`;

function watch(name: string, o: Partial<Watch> = {}): Watch {
  return {
    name,
    conditions: [{ kind: 'behash', value: hex('e', 32) }],
    notify: { file: `/var/lib/sandtrail/alerts/${name}.jsonl` },
    createdAt: CREATED,
    ...o,
  };
}

function hit(w: string, c: string, lastModified: number, at: number, o: Partial<WatchHit> = {}): WatchHit {
  return {
    watch: w,
    behaviourId: behaviourId(c),
    lastModified,
    sha256: hex(c, 64),
    sandbox: 'VirusTotal Jujubox',
    matched: [{ kind: 'behash', value: hex('e', 32) }],
    at,
    ...o,
  };
}

async function rejects(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  assert.fail('expected a rejection');
}

/**
 * One watch-store contract for every backend: watches round trip normalized, names are unique
 * (WATCH_EXISTS), a hit is new exactly once per (watch, behaviour, version) even under
 * concurrent calls, hits list newest first with since/limit/offset, remove takes the hits along.
 * Each implementation runs it with its own fixture factory.
 */
export function watchConformance(name: string, open: () => Promise<WatchStoreFixture>, opts: { skip?: string } = {}): void {
  const test = (title: string, fn: () => Promise<void>): void => {
    // a skipped case names its reason, so a missing cluster is visible in the summary
    if (opts.skip) vitestTest.skip(`${title} [skipped: ${opts.skip}]`, fn);
    else vitestTest(title, fn);
  };
  describe(`watch store conformance: ${name}`, () => {
    test('add then get and list return the watch normalized; list is sorted by name; unknown names are null', async () => {
      const f = await open();
      try {
        // before anything was added (an Elasticsearch store has not even set up its indices)
        assert.deepEqual(await f.watches.list(), []);
        assert.equal(await f.watches.get('nope'), null);
        const given = watch('zeta.loader-1', {
          conditions: [
            { kind: 'sha256', value: ` ${hex('A', 64)} ` },
            { kind: 'sigma_rule_id', value: 'Sig-Rule-1' },
            { kind: 'ja3', value: hex('B', 32) },
            { kind: 'ja3', value: hex('b', 32) },
            { kind: 'dropped_sha256', value: hex('c', 64) },
            { kind: 'ja3s', value: hex('d', 32) },
            { kind: 'behash', value: 'BeHash-1' },
          ],
          notify: { file: '/tmp/alerts/zeta.jsonl', webhook: 'soc-alerts_1' },
        });
        const expected: Watch = {
          name: 'zeta.loader-1',
          conditions: [
            { kind: 'sha256', value: hex('a', 64) },
            { kind: 'sigma_rule_id', value: 'Sig-Rule-1' },
            { kind: 'ja3', value: hex('b', 32) },
            { kind: 'dropped_sha256', value: hex('c', 64) },
            { kind: 'ja3s', value: hex('d', 32) },
            { kind: 'behash', value: 'behash-1' },
          ],
          notify: { file: '/tmp/alerts/zeta.jsonl', webhook: 'soc-alerts_1' },
          createdAt: 1_700_000_000_000,
        };
        assert.deepEqual(await f.watches.add(given), expected);
        const alpha = watch('Alpha', { notify: {} });
        await f.watches.add(alpha);
        assert.deepEqual(await f.watches.get('zeta.loader-1'), expected);
        assert.deepEqual(await f.watches.get('Alpha'), alpha);
        assert.deepEqual(await f.watches.list(), [alpha, expected]);
        // names are exact: another case is another (absent) watch
        assert.equal(await f.watches.get('alpha'), null);
      } finally {
        await f.close();
      }
    });

    test('adding an existing name fails WATCH_EXISTS (permanent) and leaves the first watch as it was', async () => {
      const f = await open();
      try {
        const first = watch('dup');
        await f.watches.add(first);
        const err = await rejects(f.watches.add(watch('dup', { conditions: [{ kind: 'ja3', value: hex('1', 32) }] })));
        assert.equal(errorCode(err), 'WATCH_EXISTS');
        assert.equal(isRetryable(err), false);
        assert.deepEqual(await f.watches.list(), [first]);
      } finally {
        await f.close();
      }
    });

    test('invalid watches are refused as usage errors before anything is stored', async () => {
      const f = await open();
      try {
        const bad: Watch[] = [
          watch(''),
          watch('-dash-first'),
          watch('has space'),
          watch('x'.repeat(101)),
          watch('no-conditions', { conditions: [] }),
          watch('bad-kind', { conditions: [{ kind: 'md5' as never, value: hex('a', 32) }] }),
          watch('empty-value', { conditions: [{ kind: 'behash', value: '  ' }] }),
          watch('short-sha', { conditions: [{ kind: 'sha256', value: hex('a', 63) }] }),
          watch('bad-ja3', { conditions: [{ kind: 'ja3', value: 'z'.repeat(32) }] }),
          // a webhook is a name from the configuration: a URL (and its secret) is never stored
          watch('url-hook', { notify: { webhook: 'https://hooks.example/T0/B0/secret?token=x' } }),
          watch('ftp-hook', { notify: { webhook: 'ftp://example.com/x' } }),
          watch('upper-hook', { notify: { webhook: 'SOC' } }),
          watch('dotted-hook', { notify: { webhook: 'hooks.example' } }),
          watch('long-hook', { notify: { webhook: 'h'.repeat(65) } }),
        ];
        for (const w of bad) assert.equal(errorCode(await rejects(f.watches.add(w))), 'USAGE', w.name);
        assert.deepEqual(await f.watches.list(), []);
      } finally {
        await f.close();
      }
    });

    test('recordHit is true once per (watch, behaviour, version): again false, a new version or another watch true', async () => {
      const f = await open();
      try {
        await f.watches.add(watch('w1'));
        await f.watches.add(watch('w2'));
        const first = hit('w1', 'a', 1000, 5000);
        assert.equal(await f.watches.recordHit(first, CREATED), true);
        // a replay: same identity, later time, other matched conditions: not new, nothing changes
        assert.equal(await f.watches.recordHit({ ...first, at: 9000, matched: [{ kind: 'ja3', value: hex('1', 32) }] }, CREATED), false);
        assert.deepEqual(await f.watches.hits('w1'), [first]);
        assert.equal(await f.watches.recordHit(hit('w1', 'a', 2000, 6000), CREATED), true, 'a newer version is a new hit');
        assert.equal(await f.watches.recordHit(hit('w2', 'a', 1000, 6000), CREATED), true, 'another watch has its own hits');
        const spaced = hit('w1', 'b', 1000, 7000, { behaviourId: behaviourId('b', 'CAPE Sandbox'), sandbox: 'CAPE Sandbox' });
        assert.equal(await f.watches.recordHit(spaced, CREATED), true);
        assert.equal(await f.watches.recordHit(spaced, CREATED), false);
        assert.deepEqual(await f.watches.hits('w2'), [hit('w2', 'a', 1000, 6000)]);
        assert.deepEqual(await f.watches.hits('unknown'), []);
      } finally {
        await f.close();
      }
    });

    test('a hit of a watch removed (or removed and added again) since it was read is not recorded, and says so', async () => {
      const f = await open();
      try {
        await f.watches.add(watch('old'));
        // a worker still holding the watch it read before `watch remove`
        assert.equal(await f.watches.remove('old'), true);
        assert.equal(await f.watches.recordHit(hit('old', 'a', 1000, 5000), CREATED), false);
        assert.deepEqual(await f.watches.hits('old'), []);
        // the name taken by another watch: the old one's hits neither count nor block the new one's
        await f.watches.add(watch('old', { createdAt: CREATED + 60_000 }));
        assert.equal(await f.watches.recordHit(hit('old', 'a', 1000, 5000), CREATED), false);
        assert.deepEqual(await f.watches.hits('old'), []);
        assert.equal(await f.watches.recordHit(hit('old', 'a', 1000, 70_000), CREATED + 60_000), true);
        assert.deepEqual(await f.watches.hits('old'), [hit('old', 'a', 1000, 70_000)]);
      } finally {
        await f.close();
      }
    });

    test('concurrent recordHit of one hit: exactly one caller is told it is new', async () => {
      const f = await open();
      try {
        await f.watches.add(watch('race'));
        const h = hit('race', 'f', 1234, 1000);
        const answers = await Promise.all(Array.from({ length: 8 }, (_, k) => f.watches.recordHit({ ...h, at: 1000 + k }, CREATED)));
        assert.equal(answers.filter(Boolean).length, 1, JSON.stringify(answers));
        assert.equal((await f.watches.hits('race')).length, 1);
      } finally {
        await f.close();
      }
    });

    test('hits are newest first (at, then version, then id), narrowed by since, paged by limit and offset', async () => {
      const f = await open();
      try {
        await f.watches.add(watch('page'));
        const all = [
          hit('page', '1', 100, 1000),
          hit('page', '2', 100, 3000),
          hit('page', '3', 100, 2000),
          hit('page', '4', 200, 3000),
          hit('page', '5', 100, 3000),
          hit('page', '1', 300, 4000, { matched: [{ kind: 'sha256', value: hex('1', 64) }] }),
        ];
        for (const h of all) assert.equal(await f.watches.recordHit(h, CREATED), true);
        const newest = [all[5], all[3], all[1], all[4], all[2], all[0]];
        assert.deepEqual(await f.watches.hits('page'), newest);
        assert.deepEqual(await f.watches.hits('page', { since: 3000 }), newest.slice(0, 4));
        assert.deepEqual(await f.watches.hits('page', { since: 3001 }), newest.slice(0, 1));
        assert.deepEqual(await f.watches.hits('page', { limit: 2, offset: 1 }), newest.slice(1, 3));
        assert.deepEqual(await f.watches.hits('page', { since: 2000, offset: 4 }), newest.slice(4, 5));
        assert.deepEqual(await f.watches.hits('page', { limit: 0 }), []);
        // after a page's last hit: the rest in order, whatever was recorded meanwhile
        const anchor = newest[2] as WatchHit;
        assert.deepEqual(await f.watches.hits('page', { after: anchor, limit: 2 }), newest.slice(3, 5));
        assert.equal(await f.watches.recordHit(hit('page', '6', 100, 9000), CREATED), true);
        assert.deepEqual(await f.watches.hits('page', { after: anchor }), newest.slice(3));
        assert.deepEqual(await f.watches.hits('page', { after: newest[0] as WatchHit, since: 3000 }), newest.slice(1, 4));
        // oldest first: the same order reversed, paged by `after` the same way (what a sync catching up reads)
        const oldest = [...newest].reverse();
        oldest.push(hit('page', '6', 100, 9000));
        assert.deepEqual(await f.watches.hits('page', { oldestFirst: true }), oldest);
        assert.deepEqual(await f.watches.hits('page', { oldestFirst: true, since: 3000, limit: 2 }), oldest.slice(2, 4));
        assert.deepEqual(await f.watches.hits('page', { oldestFirst: true, after: oldest[2] as WatchHit, limit: 3 }), oldest.slice(3, 6));
      } finally {
        await f.close();
      }
    });

    test('remove takes the watch and its hits; removing again is false; a watch added again starts afresh', async () => {
      const f = await open();
      try {
        await f.watches.add(watch('gone'));
        await f.watches.add(watch('kept'));
        const h = hit('gone', 'a', 1000, 1000);
        await f.watches.recordHit(h, CREATED);
        await f.watches.recordHit(hit('kept', 'a', 1000, 1000), CREATED);
        assert.equal(await f.watches.remove('gone'), true);
        assert.equal(await f.watches.get('gone'), null);
        assert.deepEqual(
          (await f.watches.list()).map((w) => w.name),
          ['kept'],
        );
        assert.deepEqual(await f.watches.hits('gone'), []);
        assert.deepEqual(await f.watches.hits('kept'), [hit('kept', 'a', 1000, 1000)]);
        assert.equal(await f.watches.remove('gone'), false);
        assert.equal(await f.watches.remove('never-was'), false);
        await f.watches.add(watch('gone', { conditions: [{ kind: 'ja3s', value: hex('9', 32) }] }));
        assert.deepEqual(await f.watches.hits('gone'), []);
        assert.equal(await f.watches.recordHit(h, CREATED), true, 'the old hit is new again for the new watch');
      } finally {
        await f.close();
      }
    });
  });
}
