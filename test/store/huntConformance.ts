import assert from 'node:assert/strict';
import { describe, test as vitestTest } from 'vitest';
import type { BehaviourDoc } from '../../src/normalize/index.js';
import { decodeChunk, encodeChunk } from '../../src/wire/index.js';
import { type HuntReader, type PivotStats, type PivotSummary, type Sink } from '../../src/store/index.js';
import { sinkDocOf, type DocMeta, type SinkDoc } from '../../src/wire/index.js';
import { D1, F1, F3, G1, H1, H2, H3, J1, J2, M1, M3, S1, SHA1_1, T0, corpus, hex, report } from './huntCorpus.js';

export interface HuntFixture {
  sink: Sink;
  hunt: HuntReader;
  close(): Promise<void>;
}

const ids = (docs: BehaviourDoc[], ...n: number[]): string[] => n.map((i) => (docs[i] as BehaviourDoc).id);
const names = (list: { name: string; count: number }[]): [string, number][] => list.map((x) => [x.name, x.count]);

/** Every figure of the corpus's reads, to compare two states of a store. */
async function figures(h: HuntReader, docs: BehaviourDoc[]): Promise<unknown[]> {
  return [
    await h.pivotStats('behash', H1, { limit: 10 }),
    await h.pivotStats('sigma_rule_id', G1),
    await h.pivotStats('sha256', F1),
    await h.top('behash'),
    await h.top('ja3', { since: T0 + 150 }),
    await h.related(docs[0]!.id),
    await h.fileRollup(F1),
    await h.fileRollup(M3),
  ];
}

/**
 * One contract for the hunting reads of every store, on a small corpus built through `sink.upsert`
 * (so through each backend's real write path): exact counts, sandboxes, verdicts, dates, paging,
 * rankings and rollups, unknown values, and replays that change nothing.
 */
export function huntConformance(name: string, open: () => Promise<HuntFixture>, opts: { skip?: string } = {}): void {
  const test = (title: string, fn: () => Promise<void>): void => {
    if (opts.skip) vitestTest.skip(`${title} [skipped: ${opts.skip}]`, fn);
    else vitestTest(title, fn);
  };
  const withStore = async (fn: (f: HuntFixture, docs: BehaviourDoc[]) => Promise<void>, write = true): Promise<void> => {
    const f = await open();
    try {
      const docs = corpus();
      if (write) {
        const res = await f.sink.upsert(docs.map((d) => sinkDocOf(d)));
        assert.deepEqual(
          res.map((r) => r.status),
          docs.map(() => 'ok'),
        );
      }
      await fn(f, docs);
    } finally {
      await f.close();
    }
  };

  describe(`hunt conformance: ${name}`, () => {
    test('pivotStats: counts, files, sandboxes, verdicts, first/last seen, newest first with paging', () =>
      withStore(async ({ hunt }, docs) => {
        const s = await hunt.pivotStats('behash', H1.toUpperCase(), { limit: 10 });
        assert.deepEqual(
          { ...s, sandboxes: names(s.sandboxes), verdicts: names(s.verdicts), newest: s.newest.map((l) => l.id) },
          {
            kind: 'behash',
            value: H1,
            behaviours: 4,
            files: 3,
            sandboxes: [
              ['CAPE Sandbox', 2],
              ['Zenbox', 2],
            ],
            verdicts: [
              ['MALWARE', 2],
              ['RANSOM', 1],
              ['TROJAN', 1],
            ],
            firstSeen: T0 + 100,
            lastSeen: T0 + 300,
            // newest first; the report without analysis_date last
            newest: ids(docs, 2, 1, 0, 5),
            offset: 0,
            limit: 10,
          },
        );
        assert.deepEqual(s.newest[2], {
          id: docs[0]!.id,
          sha256: F1,
          sandbox_name: 'Zenbox',
          verdicts: ['MALWARE', 'TROJAN'],
          analysis_date: T0 + 100,
        });
        assert.deepEqual(s.newest[3]?.analysis_date, null);
        const page = await hunt.pivotStats('behash', H1, { limit: 2, offset: 1 });
        assert.deepEqual([page.newest.map((l) => l.id), page.behaviours, page.offset, page.limit], [ids(docs, 1, 0), 4, 1, 2]);
        assert.deepEqual(
          (await hunt.pivotStats('behash', H1, { limit: 2, offset: 3 })).newest.map((l) => l.id),
          ids(docs, 5),
        );
        assert.equal((await hunt.pivotStats('behash', H1)).limit, 20);

        const sigma = await hunt.pivotStats('sigma_rule_id', 'SIGMA-RULE-1');
        assert.deepEqual(
          [sigma.value, sigma.behaviours, sigma.files, names(sigma.sandboxes), names(sigma.verdicts), sigma.firstSeen, sigma.lastSeen],
          ['sigma-rule-1', 3, 2, [['Zenbox', 2], ['CAPE Sandbox', 1]], [['MALWARE', 3], ['TROJAN', 1]], T0 + 100, T0 + 400],
        ); // prettier-ignore
        assert.deepEqual(
          sigma.newest.map((l) => l.id),
          ids(docs, 4, 1, 0),
        );
        const file = await hunt.pivotStats('sha256', F3.toUpperCase());
        assert.deepEqual(
          [file.behaviours, file.files, names(file.sandboxes), names(file.verdicts), file.newest.map((l) => l.id)],
          [2, 1, [['VirusTotal Jujubox', 1], ['Zenbox', 1]], [['CLEAN', 1], ['MALWARE', 1]], ids(docs, 4, 3)],
        ); // prettier-ignore
        const ja3s = await hunt.pivotStats('ja3s', S1);
        assert.deepEqual([ja3s.behaviours, ja3s.files, ja3s.newest.map((l) => l.id)], [2, 2, ids(docs, 0, 3)]);
        const dropped = await hunt.pivotStats('dropped_sha256', D1.toUpperCase());
        assert.deepEqual([dropped.value, dropped.behaviours, dropped.firstSeen, dropped.lastSeen], [D1, 2, T0 + 50, T0 + 100]);
      }));

    test("timeline: a value's behaviours per hour or day of analysis, the undated apart, summing to its behaviours", () =>
      withStore(async ({ hunt }) => {
        assert.deepEqual(await hunt.timeline('behash', H1.toUpperCase(), 3600), {
          bucketSeconds: 3600,
          counts: [{ t: T0, count: 3 }],
          undated: 1,
        });
        const day = Math.floor(T0 / 86_400) * 86_400;
        assert.deepEqual(await hunt.timeline('behash', H1, 86_400), { bucketSeconds: 86_400, counts: [{ t: day, count: 3 }], undated: 1 });
        for (const [kind, value] of [
          ['sigma_rule_id', G1],
          ['sha256', F3],
          ['ja3s', S1],
          ['dropped_sha256', D1],
        ] as const) {
          const t = await hunt.timeline(kind, value, 3600);
          const stats = await hunt.pivotStats(kind, value);
          assert.equal(t.counts.reduce((n, c) => n + c.count, 0) + t.undated, stats.behaviours, `${kind} ${value}`);
          assert.ok(t.counts.every((c) => c.t % 3600 === 0 && c.count > 0));
        }
        assert.deepEqual(await hunt.timeline('ja3', 'f'.repeat(32), 86_400), { bucketSeconds: 86_400, counts: [], undated: 0 });
        // several values' summaries at once: what pivotStats says of each, in the order asked
        for (const [kind, values] of [
          ['behash', [H2, 'f'.repeat(32), H1.toUpperCase()]],
          ['sigma_rule_id', [G1]],
          ['sha256', [F3, F1]],
        ] as const) {
          const many = await hunt.valueSummaries(kind, values);
          const summaryOnly = ({ newest: _n, offset: _o, limit: _l, ...rest }: PivotStats): PivotSummary => rest;
          const one = await Promise.all(values.map(async (v) => summaryOnly(await hunt.pivotStats(kind, v))));
          assert.deepEqual(many, one, kind);
        }
        assert.deepEqual(await hunt.valueSummaries('ja3', []), []);
      }));

    test("cooccurring: the other kinds' values a value's behaviours carry, most first, as counted from the documents", () =>
      withStore(async ({ hunt }, docs) => {
        // the oracle: the corpus's own documents, counted here
        const expected = (kind: 'behash' | 'sigma_rule_id' | 'sha256', value: string, limit: number) => {
          const v = value.toLowerCase();
          const mine = docs.filter((d) =>
            kind === 'sha256'
              ? d.sha256 === v
              : kind === 'behash'
                ? d.pivots.behash?.toLowerCase() === v
                : d.pivots.sigma_rule_ids.some((x) => x.toLowerCase() === v),
          );
          const lists = {
            behash: 'behash',
            sigma_rule_id: 'sigma_rule_ids',
            ja3: 'ja3',
            ja3s: 'ja3s',
            dropped_sha256: 'dropped_sha256',
          } as const;
          return (['behash', 'sigma_rule_id', 'ja3', 'ja3s', 'dropped_sha256'] as const)
            .filter((k) => k !== kind)
            .flatMap((k) => {
              const counts = new Map<string, number>();
              for (const d of mine) {
                const raw = d.pivots[lists[k]];
                for (const v of new Set((Array.isArray(raw) ? raw : raw ? [raw] : []).map((x) => x.toLowerCase())))
                  counts.set(v, (counts.get(v) ?? 0) + 1);
              }
              return [...counts.entries()]
                .sort(([a, x], [b, y]) => y - x || (a < b ? -1 : 1))
                .slice(0, limit)
                .map(([value, behaviours]) => ({ kind: k, value, behaviours }));
            });
        };
        for (const [kind, value] of [
          ['behash', H1],
          ['sigma_rule_id', G1],
          ['sha256', F1],
        ] as const) {
          assert.deepEqual(await hunt.cooccurring(kind, value), expected(kind, value, 10), `${kind} ${value}`);
          assert.deepEqual(await hunt.cooccurring(kind, value, 1), expected(kind, value, 1), `${kind} ${value} limit 1`);
        }
        assert.deepEqual(await hunt.cooccurring('ja3', 'f'.repeat(32)), []);
      }));

    test('top: most frequent values with their summaries, with and without since', () =>
      withStore(async ({ hunt }) => {
        const behash = await hunt.top('behash');
        assert.deepEqual(
          behash.map((s) => [s.value, s.behaviours, s.files]),
          [
            [H1, 4, 3],
            [H2, 2, 1],
            [H3, 1, 1],
          ],
        );
        // the same summary as pivotStats gives
        const { newest: _n, offset: _o, limit: _l, ...summary } = await hunt.pivotStats('behash', H1);
        assert.deepEqual(behash[0], summary);
        assert.deepEqual(
          (await hunt.top('behash', { limit: 2 })).map((s) => s.value),
          [H1, H2],
        );
        assert.deepEqual(
          (await hunt.top('sigma_rule_id')).map((s) => [s.value, s.behaviours]),
          [
            ['sigma-rule-1', 3],
            ['sigma-rule-2', 2],
          ],
        );
        // since: only behaviours analysed at or after it count, in the ranking and in the summaries
        const recent = await hunt.top('behash', { since: T0 + 150 });
        assert.deepEqual(
          recent.map((s) => [s.value, s.behaviours, s.files, names(s.sandboxes), names(s.verdicts), s.firstSeen, s.lastSeen]),
          [
            [H1, 2, 2, [['CAPE Sandbox', 1], ['Zenbox', 1]], [['MALWARE', 1]], T0 + 200, T0 + 300],
            [H2, 1, 1, [['Zenbox', 1]], [['MALWARE', 1]], T0 + 400, T0 + 400],
            [H3, 1, 1, [['Lastline', 1]], [], T0 + 500, T0 + 500],
          ],
        ); // prettier-ignore
        assert.deepEqual(
          (await hunt.top('ja3', { since: T0 + 150 })).map((s) => [s.value, s.behaviours]),
          [
            [J2, 2],
            [J1, 1],
          ],
        );
        assert.deepEqual(await hunt.top('ja3s', { since: T0 + 10_000 }), []);
        assert.deepEqual(await hunt.top('behash', { limit: 0 }), []);
      }));

    test('related: the values with how many others share each, others ranked by shared values then newest', () =>
      withStore(async ({ hunt }, docs) => {
        const r = await hunt.related(docs[0]!.id);
        assert.ok(r);
        assert.deepEqual(r.values, [
          { kind: 'behash', value: H1, others: 3 },
          { kind: 'sigma_rule_id', value: 'sigma-rule-1', others: 2 },
          { kind: 'sigma_rule_id', value: 'sigma-rule-2', others: 1 },
          { kind: 'ja3', value: J1, others: 2 },
          { kind: 'ja3s', value: S1, others: 1 },
          { kind: 'dropped_sha256', value: D1, others: 1 },
        ]);
        assert.deepEqual(
          r.related.map((x) => [x.id, x.shared.map((v) => `${v.kind}:${v.value}`)]),
          [
            [docs[1]!.id, [`behash:${H1}`, 'sigma_rule_id:sigma-rule-1', `ja3:${J1}`]],
            [docs[3]!.id, [`ja3:${J1}`, `ja3s:${S1}`, `dropped_sha256:${D1}`]],
            [docs[2]!.id, [`behash:${H1}`, 'sigma_rule_id:sigma-rule-2']],
            [docs[4]!.id, ['sigma_rule_id:sigma-rule-1']],
            [docs[5]!.id, [`behash:${H1}`]],
          ],
        );
        const { shared, ...line } = r.related[1]!;
        assert.equal(shared.length, 3);
        assert.deepEqual(line, {
          id: docs[3]!.id,
          sha256: F3,
          sandbox_name: 'VirusTotal Jujubox',
          verdicts: ['CLEAN'],
          analysis_date: T0 + 50,
        });
        assert.deepEqual(
          (await hunt.related(docs[0]!.id, { limit: 2 }))?.related.map((x) => x.id),
          ids(docs, 1, 3),
        );
        const lone = await hunt.related(docs[6]!.id);
        assert.deepEqual(lone?.values, [
          { kind: 'behash', value: H3, others: 0 },
          { kind: 'ja3', value: J2, others: 1 },
        ]);
        assert.deepEqual(
          lone?.related.map((x) => [x.id, x.shared.length]),
          [[docs[2]!.id, 1]],
        );
        assert.equal(await hunt.related(`${hex('ee', 64)}_Zenbox`), null);
      }));

    test('fileRollup: every report of a file merged, by SHA-256, MD5 or SHA-1 in any case', () =>
      withStore(async ({ hunt }, docs) => {
        const r = await hunt.fileRollup(F1);
        assert.deepEqual(r, {
          sha256: F1,
          md5: M1,
          sha1: SHA1_1,
          reports: [
            { id: docs[1]!.id, sandbox_name: 'CAPE Sandbox', verdicts: ['MALWARE'], behash: H1, analysis_date: T0 + 200 },
            { id: docs[0]!.id, sandbox_name: 'Zenbox', verdicts: ['MALWARE', 'TROJAN'], behash: H1, analysis_date: T0 + 100 },
          ],
          sigma: [
            // the first report naming a level or title gives it (CAPE's entry has neither)
            { value: 'sigma-rule-1', sandboxes: ['CAPE Sandbox', 'Zenbox'], level: 'high', title: 'Rule One' },
            { value: 'sigma-rule-2', sandboxes: ['Zenbox'], level: 'low', title: 'Rule Two' },
          ],
          ja3: [{ value: J1, sandboxes: ['CAPE Sandbox', 'Zenbox'] }],
          ja3s: [{ value: S1, sandboxes: ['Zenbox'] }],
          dropped_sha256: [{ value: D1, sandboxes: ['Zenbox'] }],
          // with the description the reports give, when one does
          mitre_techniques: [
            { value: 'T1055', sandboxes: ['CAPE Sandbox', 'Zenbox'], name: 'Process Injection' },
            { value: 'T1071', sandboxes: ['Zenbox'], name: null },
          ],
          // by format and name (the format without its SIG_FORMAT_ prefix)
          signatures: [
            { name: 'inject thread', format: 'capa', description: 'inject thread rule', sandboxes: ['Zenbox'] },
            { name: 'Loader_Strings', format: 'yara', description: 'Loader_Strings rule', sandboxes: ['CAPE Sandbox', 'Zenbox'] },
          ],
          // DNS names, HTTP and IDS URLs' hosts, TLS SNI and IDS host names; DNS answers, IP
          // traffic and IDS destinations (not the alert's source: the sandbox itself)
          hosts: [
            { value: 'c2.example', sandboxes: ['CAPE Sandbox'] },
            { value: 'evil.example', sandboxes: ['Zenbox'] },
            { value: 'ids-url.example', sandboxes: ['CAPE Sandbox'] },
            { value: 'ids.example', sandboxes: ['CAPE Sandbox'] },
            { value: 'x.example', sandboxes: ['CAPE Sandbox', 'Zenbox'] },
          ],
          ips: [
            { value: '192.0.2.9', sandboxes: ['CAPE Sandbox'] },
            { value: '198.51.100.7', sandboxes: ['CAPE Sandbox'] },
            { value: '203.0.113.5', sandboxes: ['Zenbox'] },
          ],
        });
        assert.deepEqual(await hunt.fileRollup(F1.toUpperCase()), r);
        assert.deepEqual(await hunt.fileRollup(M1.toUpperCase()), r);
        assert.deepEqual(await hunt.fileRollup(` ${SHA1_1} `), r);
        // by MD5: the file's every report, also the one whose MD5 was not a valid digest
        const f3 = await hunt.fileRollup(M3);
        assert.deepEqual(
          [f3?.sha256, f3?.md5, f3?.sha1, f3?.reports.map((x) => x.id), f3?.sigma.map((s) => [s.value, s.level])],
          [F3, M3, null, ids(docs, 3, 4), [['sigma-rule-1', null]]],
        );
        assert.equal(await hunt.fileRollup(hex('ab', 64)), null);
        assert.equal(await hunt.fileRollup(hex('ab', 32)), null);
        assert.equal(await hunt.fileRollup('xyz'), null);
        assert.equal(await hunt.fileRollup(hex('ab', 62)), null);
      }));

    test('unknown values read as zeros and nulls, an empty store too', () =>
      withStore(async ({ sink, hunt }) => {
        const zero = {
          kind: 'ja3' as const,
          value: hex('ab', 32),
          behaviours: 0,
          files: 0,
          sandboxes: [],
          verdicts: [],
          firstSeen: null,
          lastSeen: null,
          newest: [],
          offset: 0,
          limit: 20,
        };
        assert.deepEqual(await hunt.pivotStats('ja3', hex('AB', 32)), zero);
        assert.deepEqual(await hunt.top('behash'), []);
        assert.equal(await hunt.fileRollup(F1), null);
        assert.equal(await hunt.related(`${F1}_Zenbox`), null);
        await sink.upsert(corpus().map((d) => sinkDocOf(d)));
        assert.deepEqual(await hunt.pivotStats('ja3', hex('AB', 32)), zero);
        assert.equal((await hunt.pivotStats('sha256', hex('ab', 64))).behaviours, 0);
      }, false));

    test('replayed documents, stale ones included, change no figure', () =>
      withStore(async ({ sink, hunt }, docs) => {
        const before = await figures(hunt, docs);
        // an older version of a report: other values, other verdicts; the stored newer one must win
        const stale = report({
          sha: F1,
          sandbox: 'Zenbox',
          at: T0 + 9000,
          lmd: T0 - 1,
          behash: H3,
          ja3: [J2],
          verdicts: ['CLEAN'],
          md5: M3,
        });
        const res = await sink.upsert([sinkDocOf(stale), ...docs.map((d) => sinkDocOf(d))]);
        assert.deepEqual(res[0], { id: docs[0]!.id, status: 'ok', stale: true });
        await sink.upsert([...docs].reverse().map((d) => sinkDocOf(d)));
        assert.deepEqual(await figures(hunt, docs), before);
      }));

    test('documents from a chunk written before the hunting fields give the same figures', () =>
      withStore(async ({ sink, hunt }, docs) => {
        const old = docs.map((d): SinkDoc => {
          const { meta, json } = sinkDocOf(d);
          const { verdicts: _v, md5: _m, sha1: _s, ...rest } = meta;
          return { meta: rest as DocMeta, json };
        });
        const encoded = await encodeChunk(old);
        const decoded = await decodeChunk(encoded.payload, encoded.rawBytes);
        assert.equal((decoded[0]?.meta as Partial<DocMeta>).verdicts, undefined);
        assert.deepEqual(
          (await sink.upsert(decoded)).map((r) => r.status),
          docs.map(() => 'ok'),
        );
        const viaOld = await figures(hunt, docs);
        await sink.upsert(docs.map((d) => sinkDocOf(d)));
        assert.deepEqual(await figures(hunt, docs), viaOld);
        assert.equal((await hunt.pivotStats('behash', H1)).verdicts.length, 3);
      }, false));
  });
}
