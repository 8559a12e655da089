/** The hunting reads `npm run bench:hunt` times, on values picked from the store itself. */
import { PIVOT_KINDS, type HuntReader, type PivotKind } from '../src/store/index.js';
import type { HuntPicks } from './huntPicks.js';
import { HUNT_END, round } from './huntStore.js';

/** The p95 each read should stay within, by store: SQLite's is reported, Elasticsearch's judged (see --max-p95-ms). */
export const TARGET_MS = { sqlite: 200, es: 500 } as const;
const hunt = (msg: string): void => void process.stderr.write(`bench:hunt: ${msg}\n`);

type ValueKind = Exclude<PivotKind, 'sha256'>;

/** One read to time: what it asks, and what it answered that says it worked (or why it did not). */
interface Read {
  name: string;
  run: (h: HuntReader) => Promise<unknown>;
  /** A short description of the answer, or throws when the answer is wrong for this store. */
  check: (answer: unknown) => string;
}

/** The figures of one read: its answer on the first run, median and p95 over the runs, or why it failed. */
export interface ReadResult {
  read: string;
  result: string | null;
  /** The untimed first run's time (caches filled), apart from the median and p95 of the runs after it. */
  firstMs: number | null;
  medianMs: number | null;
  p95Ms: number | null;
  withinTarget: boolean | null;
  error?: string;
}

function fail(why: string): never {
  throw new Error(why);
}

/** The reads of the run, on values picked from the store itself (see HuntPicks). */
export async function plan(picks: HuntPicks): Promise<Read[]> {
  const reads: Read[] = [];
  for (const kind of PIVOT_KINDS) {
    for (const heat of ['hot', 'cold'] as const) {
      const { value, n } = await picks.pick(kind, heat);
      reads.push({
        name: `pivotStats ${kind} ${heat} (${n})`,
        run: (h) => h.pivotStats(kind, value),
        check: (a) => {
          const s = a as Awaited<ReturnType<HuntReader['pivotStats']>>;
          if (s.behaviours !== n) fail(`${s.behaviours} behaviours, the store has ${n}`);
          return `${s.behaviours} beh., ${s.files} files, ${s.newest.length} newest`;
        },
      });
    }
  }
  // the last 24 hours of the store's own analysis dates
  const since = ((await picks.latest()) ?? HUNT_END) - 86_400;
  for (const kind of PIVOT_KINDS.filter((k): k is ValueKind => k !== 'sha256')) {
    for (const s of [undefined, since]) {
      reads.push({
        name: `top ${kind}${s === undefined ? '' : ' since 24 h'}`,
        run: (h) => h.top(kind, s === undefined ? {} : { since: s }),
        check: (a) => {
          const t = a as Awaited<ReturnType<HuntReader['top']>>;
          if (t.length === 0) fail('no values');
          return `${t.length} values, first ${t[0]?.behaviours} beh.`;
        },
      });
    }
  }
  const hot = (await picks.pick('behash', 'hot')).value;
  const cold = (await picks.pick('behash', 'cold')).value;
  const ids: [string, string][] = [
    ['newest of the hottest behash', await picks.newestWithBehash(hot)],
    ['a behaviour in the middle', await picks.middleId()],
    ['the coldest behash', await picks.anyWithBehash(cold)],
  ];
  for (const [what, id] of ids) {
    reads.push({
      name: `related: ${what}`,
      run: (h) => h.related(id),
      check: (a) => {
        const r = a as Awaited<ReturnType<HuntReader['related']>>;
        if (!r) fail(`no answer for the stored behaviour ${id}`);
        return `${r.values.length} values, ${r.related.length} related`;
      },
    });
  }
  const file = await picks.pick('sha256', 'hot');
  const hashes = await picks.hashesOf(file.value);
  for (const [kind, hash] of [
    ['sha256', file.value],
    ['md5', hashes.md5],
    ['sha1', hashes.sha1],
  ] as const) {
    reads.push({
      name: `fileRollup by ${kind} (${file.n} reports)`,
      run: (h) => h.fileRollup(hash),
      check: (a) => {
        const r = a as Awaited<ReturnType<HuntReader['fileRollup']>>;
        if (r?.reports.length !== file.n) fail(`${r?.reports.length ?? 'no'} reports, the store has ${file.n}`);
        return `${r.reports.length} reports, ${r.sigma.length} sigma, ${r.hosts.length} hosts`;
      },
    });
  }
  return reads;
}

/** The value at quantile q (0..1) of sorted times, nearest rank. */
function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] as number;
}

/**
 * Runs each read once apart (its time is `firstMs`: a store's caches filled for the first time,
 * Elasticsearch's global ordinals of the field after a refresh), then `runs` timed times for the
 * median and p95; `targetMs` is what withinTarget compares each p95 with.
 */
export async function measure(
  reader: HuntReader,
  reads: Read[],
  runs: number,
  targetMs: number,
  say: (msg: string) => void = hunt,
): Promise<ReadResult[]> {
  const out: ReadResult[] = [];
  for (const r of reads) {
    const times: number[] = [];
    let result: string | null = null;
    let firstMs: number | null = null;
    try {
      for (let i = 0; i <= runs; i++) {
        const t0 = performance.now();
        const answer = await r.run(reader);
        const ms = performance.now() - t0;
        if (i === 0) {
          result = r.check(answer);
          firstMs = round(ms, 1);
        } else times.push(ms);
      }
    } catch (err) {
      out.push({ read: r.name, result, firstMs, medianMs: null, p95Ms: null, withinTarget: null, error: (err as Error).message });
      say(`  ${r.name}: FAILED: ${(err as Error).message}`);
      continue;
    }
    times.sort((a, b) => a - b);
    const median = round(quantile(times, 0.5), 1);
    const p95 = round(quantile(times, 0.95), 1);
    out.push({ read: r.name, result, firstMs, medianMs: median, p95Ms: p95, withinTarget: p95 <= targetMs });
    say(`  ${r.name}: first ${firstMs} ms, then median ${median} ms, p95 ${p95} ms`);
  }
  return out;
}
