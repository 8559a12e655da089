/**
 * `npm run bench:es-partitions`: what a write costs on Elasticsearch as the day indices behind the
 * alias grow in number. Before each write the sink looks every id up in every day index (one
 * real-time get per id and index), so that one live copy of a behaviour stays across days. This
 * fills stores of 7 and 365 day indices (by default) on a real node and times, at each size, a
 * chunk of new behaviours (every lookup misses) and a chunk of updates of the oldest day's
 * behaviours (each finds its older copy and deletes it), the median of several runs.
 * See `npm run bench:es-partitions -- --help`.
 */
import { parseArgs } from 'node:util';
import type { BehaviourDoc } from '../src/normalize/index.js';
import { openElasticsearchStore } from '../src/store/index.js';
import { openRealStore } from '../test/support/realElasticsearch.js';
import { makeDoc, sinkDocs } from '../test/store/sinkConformance.js';
import { startBenchElasticsearch, type BenchElasticsearch } from './elasticsearch.js';

const HELP = `Usage: npm run bench:es-partitions -- [options]

Fills one store per --days size on a real Elasticsearch node (started here from the distribution
of scripts/elasticsearch/pom.xml, or ELASTICSEARCH_URL's cluster), one primary shard and no replica
per day index, then times the sink's upsert of a chunk of new behaviours and of a chunk of updates
of the oldest day's behaviours, and prints the median per chunk and per behaviour at each size.

  --days LIST              day indices per store, comma-separated (default 7,365)
  --per-day N              behaviours written into each day index (default 50)
  --chunk N                behaviours per timed upsert, as an index job's chunk (default 500)
  --runs N                 timed upserts of each kind per size (default 5)
  --json                   one JSON object on stdout
  --help
`;

const say = (m: string): void => void process.stderr.write(`bench:es-partitions: ${m}\n`);
const DAY = 86_400;
/** 2026-01-01T00:00:00Z, in seconds: the first day index's day. */
const T0 = 1_767_225_600;
const sha = (n: number): string => n.toString(16).padStart(64, '0');

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? 0;
}

interface SizeResult {
  days: number;
  behaviours: number;
  fillSeconds: number;
  newChunkMs: number;
  updateChunkMs: number;
  newPerBehaviourMs: number;
  updatePerBehaviourMs: number;
}

async function measure(es: BenchElasticsearch, days: number, perDay: number, chunk: number, runs: number): Promise<SizeResult> {
  // a prefix of its own, every index and template of it deleted afterwards
  const fixture = openRealStore({ url: es.url, auth: es.auth });
  const store = openElasticsearchStore(`es:${es.url}`, {
    ...es.auth,
    indexPrefix: fixture.prefix,
    index: { shards: 1, replicas: 0 },
    refresh: false,
  });
  try {
    const t0 = performance.now();
    let next = 0;
    const oldest: BehaviourDoc[] = [];
    for (let d = 0; d < days; d++) {
      const docs = Array.from({ length: perDay }, () => makeDoc(sha(++next), 'Zenbox', T0 + d * DAY + 3600, { behash: `b${d % 97}` }));
      if (d === 0) oldest.push(...docs);
      const r = await store.sink.upsert(sinkDocs(docs));
      const bad = r.filter((x) => x.status !== 'ok');
      if (bad.length) throw new Error(`filling day ${d}: ${JSON.stringify(bad[0])}`);
    }
    const fillSeconds = (performance.now() - t0) / 1000;
    say(`  ${days} day indices, ${next} behaviours written in ${fillSeconds.toFixed(1)} s`);
    const last = T0 + (days - 1) * DAY + 7200;
    const time = async (docs: BehaviourDoc[]): Promise<number> => {
      const s = performance.now();
      const r = await store.sink.upsert(sinkDocs(docs));
      const ms = performance.now() - s;
      const bad = r.filter((x) => x.status !== 'ok');
      if (bad.length) throw new Error(`timed upsert: ${JSON.stringify(bad[0])}`);
      return ms;
    };
    const fresh: number[] = [];
    const updates: number[] = [];
    for (let i = 0; i < runs; i++) {
      fresh.push(await time(Array.from({ length: chunk }, () => makeDoc(sha(++next), 'Zenbox', last, { behash: 'new' }))));
      // updates of the oldest day's behaviours into the newest day: each lookup finds a copy to delete
      const batch = oldest.splice(0, Math.min(chunk, oldest.length));
      if (batch.length > 0) updates.push(await time(batch.map((d) => makeDoc(d.sha256, 'Zenbox', last + i + 1, { behash: 'moved' }))));
    }
    const updateChunk = updates.length ? median(updates) : NaN;
    const updateSize = Math.min(chunk, perDay);
    return {
      days,
      behaviours: next,
      fillSeconds,
      newChunkMs: median(fresh),
      updateChunkMs: updateChunk,
      newPerBehaviourMs: median(fresh) / chunk,
      updatePerBehaviourMs: updateChunk / updateSize,
    };
  } finally {
    await store.close();
    await fixture.close();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      days: { type: 'string', default: '7,365' },
      'per-day': { type: 'string', default: '50' },
      chunk: { type: 'string', default: '500' },
      runs: { type: 'string', default: '5' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) return void process.stdout.write(HELP);
  const num = (v: string, name: string): number => {
    if (!/^\d+$/.test(v) || Number(v) < 1) throw new Error(`--${name} takes a whole number from 1: ${v}`);
    return Number(v);
  };
  const sizes = values.days.split(',').map((d) => num(d.trim(), 'days'));
  const perDay = num(values['per-day'], 'per-day');
  const chunk = num(values.chunk, 'chunk');
  const runs = num(values.runs, 'runs');
  const es = await startBenchElasticsearch(say);
  const results: SizeResult[] = [];
  try {
    for (const days of sizes) {
      say(`${days} day indices...`);
      results.push(await measure(es, days, perDay, chunk, runs));
    }
  } finally {
    await es.drop();
    await es.stop();
  }
  const first = results[0];
  const out = {
    elasticsearch: { version: es.version, where: es.where },
    options: { perDay, chunk, runs },
    sizes: results,
    ratios: results.map((r) => ({
      days: r.days,
      newChunkToFirst: first ? r.newChunkMs / first.newChunkMs : null,
      updateChunkToFirst: first ? r.updateChunkMs / first.updateChunkMs : null,
    })),
  };
  if (values.json) return void process.stdout.write(`${JSON.stringify(out)}\n`);
  const lines = [
    `Elasticsearch ${es.version} (${es.where}); ${perDay} behaviours a day, chunks of ${chunk}, median of ${runs}`,
    'day indices  behaviours  new chunk ms  per behaviour  update chunk ms  per behaviour  new/first  update/first',
    ...results.map((r, i) =>
      [
        String(r.days).padStart(11),
        String(r.behaviours).padStart(11),
        r.newChunkMs.toFixed(0).padStart(13),
        r.newPerBehaviourMs.toFixed(2).padStart(14),
        r.updateChunkMs.toFixed(0).padStart(16),
        r.updatePerBehaviourMs.toFixed(2).padStart(14),
        (out.ratios[i]?.newChunkToFirst ?? 0).toFixed(2).padStart(10),
        (out.ratios[i]?.updateChunkToFirst ?? 0).toFixed(2).padStart(13),
      ].join(' '),
    ),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`bench:es-partitions: FAILED: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
});
