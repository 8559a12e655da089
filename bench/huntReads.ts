/** The hunting reads `npm run bench:hunt` times, on values picked from the store itself. */
import BetterSqlite3 from 'better-sqlite3';
import { PIVOT_KINDS, type HuntReader, type PivotKind } from '../src/store/index.js';
import { HUNT_END, round } from './huntStore.js';

/** The p95 each read should stay within. */
export const TARGET_MS = 200;
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
  medianMs: number | null;
  p95Ms: number | null;
  withinTarget: boolean | null;
  error?: string;
}

function fail(why: string): never {
  throw new Error(why);
}

/** The reads of the run, on values picked from the store itself (the most and a least frequent of each kind in its largest day). */
export function plan(file: string): Read[] {
  const db = new BetterSqlite3(file, { readonly: true });
  try {
    // Values are picked in the day holding the most behaviours, through its own indexes: a GROUP BY
    // over the views reads every day's table whole (over 15 minutes for a 36 GB store), then
    // counted over every day.
    const days = db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name GLOB 'behaviours_[0-9]*'")
      .pluck()
      .all() as string[];
    const span = (t: string): number => (db.prepare(`SELECT max(rowid) - min(rowid) FROM ${t}`).pluck().get() as number | null) ?? -1;
    const largest = days.map((t) => ({ t, n: span(t) })).sort((a, b) => b.n - a.n)[0]?.t ?? fail('the store holds no day');
    const pick = (kind: PivotKind, order: 'DESC' | 'ASC'): { value: string; n: number } => {
      const found = (
        kind === 'sha256'
          ? db.prepare(`SELECT sha256 FROM ${largest} GROUP BY sha256 ORDER BY count(*) ${order}, sha256 LIMIT 1`).pluck().get()
          : db
              .prepare(
                `SELECT value FROM ${largest.replace('behaviours', 'pivots')} WHERE kind = ? GROUP BY value ORDER BY count(*) ${order}, value LIMIT 1`,
              )
              .pluck()
              .get(kind)
      ) as string | undefined;
      if (found === undefined) fail(`the store holds no ${kind} value`);
      const n = (
        kind === 'sha256'
          ? db.prepare('SELECT count(*) FROM behaviours WHERE sha256 = ?').pluck().get(found)
          : db.prepare('SELECT count(*) FROM pivots WHERE kind = ? AND value = ?').pluck().get(kind, found)
      ) as number;
      return { value: found, n };
    };
    const reads: Read[] = [];
    for (const kind of PIVOT_KINDS) {
      for (const [heat, order] of [
        ['hot', 'DESC'],
        ['cold', 'ASC'],
      ] as const) {
        const { value, n } = pick(kind, order);
        reads.push({
          name: `pivotStats ${kind} ${heat} (${n})`,
          run: (h) => h.pivotStats(kind, value),
          check: (a) => {
            const s = a as Awaited<ReturnType<HuntReader['pivotStats']>>;
            if (s.behaviours !== n) fail(`${s.behaviours} behaviours, the pivots table has ${n}`);
            return `${s.behaviours} beh., ${s.files} files, ${s.newest.length} newest`;
          },
        });
      }
    }
    // the last 24 hours of the store's own analysis dates
    const latest = Math.max(
      ...days.map((t) => (db.prepare(`SELECT max(analysis_date) FROM ${t}`).pluck().get() as number | null) ?? -Infinity),
    );
    const newest = Number.isFinite(latest) ? latest : HUNT_END;
    const since = newest - 86_400;
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
    const hot = pick('behash', 'DESC').value;
    const cold = pick('behash', 'ASC').value;
    const ids: [string, string][] = [
      ['newest of the hottest behash', (db.prepare("SELECT id FROM pivots WHERE kind = 'behash' AND value = ? ORDER BY id DESC LIMIT 1").get(hot) as { id: string }).id],
      ['a behaviour in the middle', (db.prepare("SELECT id FROM behaviour_days WHERE id >= '8' ORDER BY id LIMIT 1").get() as { id: string }).id],
      ['the coldest behash', (db.prepare("SELECT id FROM pivots WHERE kind = 'behash' AND value = ? LIMIT 1").get(cold) as { id: string }).id],
    ]; // prettier-ignore
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
    const hottest = pick('sha256', 'DESC');
    const file = { sha256: hottest.value, n: hottest.n };
    const hashes = db.prepare('SELECT md5, sha1 FROM behaviours WHERE sha256 = ? LIMIT 1').get(file.sha256) as {
      md5: string;
      sha1: string;
    };
    for (const [kind, hash] of [
      ['sha256', file.sha256],
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
  } finally {
    db.close();
  }
}

/** The value at quantile q (0..1) of sorted times, nearest rank. */
function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] as number;
}

export async function measure(reader: HuntReader, reads: Read[], runs: number, say: (msg: string) => void = hunt): Promise<ReadResult[]> {
  const out: ReadResult[] = [];
  for (const r of reads) {
    const times: number[] = [];
    let result: string | null = null;
    try {
      for (let i = 0; i < runs; i++) {
        const t0 = performance.now();
        const answer = await r.run(reader);
        times.push(performance.now() - t0);
        if (i === 0) result = r.check(answer);
      }
    } catch (err) {
      out.push({ read: r.name, result, medianMs: null, p95Ms: null, withinTarget: null, error: (err as Error).message });
      say(`  ${r.name}: FAILED: ${(err as Error).message}`);
      continue;
    }
    times.sort((a, b) => a - b);
    const median = round(quantile(times, 0.5), 1);
    const p95 = round(quantile(times, 0.95), 1);
    out.push({ read: r.name, result, medianMs: median, p95Ms: p95, withinTarget: p95 <= TARGET_MS });
    say(`  ${r.name}: median ${median} ms, p95 ${p95} ms`);
  }
  return out;
}
