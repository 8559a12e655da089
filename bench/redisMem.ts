/**
 * Redis memory per queued record during the end-to-end phase: `INFO memory` used_memory against
 * the raw (uncompressed feed JSON) bytes of the records waiting in the index queue.
 */
import { writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Cluster, Redis } from 'ioredis';
import type { Queues } from '../src/queue/index.js';
import type { AcceptedSizes } from './inproc.js';

/** The requirement checked against: Redis growth at most this share of the queued records' raw bytes. */
export const REDIS_TARGET_PERCENT = 25;

/** Index-queue states whose jobs still hold a payload key in Redis. */
const QUEUED = ['waiting', 'active', 'delayed', 'prioritized'] as const;

/** One reading. */
export interface RedisSample {
  /** Seconds since sampling started. */
  at: number;
  /** used_memory minus used_memory at the start of the phase. */
  usedDelta: number;
  jobs: number;
  records: number;
  /** Raw feed bytes of the queued records (exact where the chunk's offset is known, see `method`). */
  rawBytes: number;
  /** Of `jobs`, those whose raw bytes are exact (line sizes), the others from their batch's average. */
  exactJobs: number;
  /** Compressed payload bytes the jobs declare (`bytes` of the job data). */
  payloadBytes: number;
  /** Jobs queued at the reading whose data was gone before it could be read (not counted). */
  unknownJobs: number;
}

/** The figures reported. */
export interface RedisMemoryFigures {
  method: string;
  intervalMs: number;
  samples: number;
  baselineUsedMemory: number;
  /** The sample with the largest used_memory growth, and its growth as a share of the queued raw bytes. */
  atPeak: (RedisSample & { percent: number | null }) | null;
  /** The sample with the most raw bytes queued. */
  atPeakQueue: (RedisSample & { percent: number | null }) | null;
  /**
   * Largest share over the samples holding at least half the peak queue's raw bytes (a nearly
   * empty queue divides Redis's fixed growth, streams and completed feed jobs, by almost nothing).
   */
  maxPercentHalfFull: (RedisSample & { percent: number }) | null;
  targetPercent: number;
  meetsTarget: boolean | null;
  /** CSV of every sample (under --out). */
  csv: string;
}

/** used_memory of an `INFO memory` answer. */
const usedMemoryOf = (info: unknown): number => Number(/^used_memory:(\d+)/m.exec(String(info))?.[1] ?? NaN);
const usedMemory = async (conn: Redis | Cluster): Promise<number> => usedMemoryOf(await conn.info('memory'));

/**
 * Samples used_memory and the index queue every `intervalMs` until stopped. The raw bytes of a
 * queued chunk (batch, n, count) come from the normalize phase's line sizes of accepted records
 * when the chunk's first record is known, i.e. every earlier chunk of its batch was seen queued
 * (chunks hold consecutive accepted records); otherwise count × that batch's average accepted
 * record size. When the batch log's accepted counts differ from the normalize phase's (`stop`'s
 * `acceptedOk`), every chunk is estimated from the averages instead.
 */
export class RedisMemorySampler {
  private readonly samples: RedisSample[] = [];
  /** Per sample, the raw bytes from the batch averages alone (used when exact sizes cannot be trusted). */
  private readonly averaged: number[] = [];
  private readonly counts = new Map<string, Map<number, number>>();
  private readonly jobData = new Map<string, { batch: string; n: number; count: number; bytes?: number }>();
  private baseline = 0;
  private t0 = 0;
  private stopped = false;
  private loop: Promise<void> | undefined;
  private error: unknown;

  constructor(
    private readonly queues: Queues,
    private readonly sizes: AcceptedSizes | undefined,
    /** Raw bytes per record for a batch without line sizes (the feed's average line, from the manifest). */
    private readonly fallbackAverage: number,
    private readonly intervalMs = 100,
  ) {}

  async start(): Promise<void> {
    this.baseline = await usedMemory(this.queues.connection);
    this.t0 = performance.now();
    this.loop = (async () => {
      while (!this.stopped) {
        try {
          await this.sample();
        } catch (err) {
          this.error ??= err; // reported as a note; the phase's own watchdogs judge Redis
        }
        if (!this.stopped) await sleep(this.intervalMs, undefined, { ref: false });
      }
    })();
  }

  /**
   * One reading. used_memory and the queued job ids are read in one MULTI, so Redis answers both
   * at the same instant: read one after the other, an index worker completing a group of chunks in
   * between (16 jobs at once) left the memory of payloads still queued divided by a queue already
   * emptied of them. A job's data (batch, n, count, bytes) never changes, so it is fetched once,
   * when its id is first seen.
   */
  private async sample(): Promise<void> {
    const { connection: conn, index } = this.queues;
    const k = index.keys;
    const replies = await conn
      .multi()
      .info('memory')
      .lrange(k.wait ?? '', 0, -1)
      .lrange(k.active ?? '', 0, -1)
      .zrange(k.delayed ?? '', 0, -1)
      .zrange(k.prioritized ?? '', 0, -1)
      .exec();
    if (!replies) throw new Error('Redis MULTI of INFO memory and the index queue was aborted');
    for (const [err] of replies) if (err) throw err;
    const used = usedMemoryOf(replies[0]?.[1]);
    // a job moving between states while the lists are read can show up twice
    const ids = [...new Set(replies.slice(1).flatMap(([, v]) => v as string[]))];
    for (const id of ids) {
      if (this.jobData.has(id)) continue;
      const j = await index.getJob(id);
      if (j?.data) this.jobData.set(id, j.data);
    }
    const at = (performance.now() - this.t0) / 1000;
    const s: RedisSample = {
      at,
      usedDelta: used - this.baseline,
      jobs: 0,
      records: 0,
      rawBytes: 0,
      exactJobs: 0,
      payloadBytes: 0,
      unknownJobs: 0,
    };
    const fresh: { batch: string; n: number; count: number; bytes: number }[] = [];
    for (const id of ids) {
      const data = this.jobData.get(id);
      if (!data) {
        // done and removed before its data could be read: its records are not counted (against us)
        s.unknownJobs += 1;
        continue;
      }
      const { batch, n, count, bytes } = data;
      let byN = this.counts.get(batch);
      if (!byN) this.counts.set(batch, (byN = new Map()));
      byN.set(n, count);
      fresh.push({ batch, n, count, bytes: bytes ?? 0 });
    }
    let averaged = 0;
    for (const j of fresh) {
      s.jobs += 1;
      s.records += j.count;
      s.payloadBytes += j.bytes;
      const estimate = j.count * this.average(j.batch);
      const exact = this.exactRaw(j.batch, j.n, j.count);
      if (exact !== undefined) s.exactJobs += 1;
      s.rawBytes += exact ?? estimate;
      averaged += estimate;
    }
    this.samples.push(s);
    this.averaged.push(averaged);
  }

  private exactRaw(batch: string, n: number, count: number): number | undefined {
    const p = this.sizes?.get(batch);
    const byN = this.counts.get(batch);
    if (!p || !byN) return undefined;
    let start = 0;
    for (let i = 0; i < n; i++) {
      const c = byN.get(i);
      if (c === undefined) return undefined;
      start += c;
    }
    if (start + count > p.length - 1) return undefined;
    return (p[start + count] ?? 0) - (p[start] ?? 0);
  }

  private average(batch: string): number {
    const p = this.sizes?.get(batch);
    if (p && p.length > 1) return (p[p.length - 1] ?? 0) / (p.length - 1);
    return this.fallbackAverage;
  }

  /** Stops sampling without waiting for a reading in progress (a failed phase; Redis may be gone). */
  halt(): void {
    this.stopped = true;
  }

  /**
   * Stops sampling and returns the figures; writes every sample to `csvPath`. `acceptedOk`: the
   * normalize phase's accepted counts agree with the batch log (otherwise every chunk is estimated).
   */
  async stop(csvPath: string, acceptedOk: boolean): Promise<RedisMemoryFigures> {
    this.stopped = true;
    await this.loop;
    if (!acceptedOk) {
      this.samples.forEach((s, i) => {
        s.exactJobs = 0;
        s.rawBytes = this.averaged[i] ?? 0;
      });
    }
    writeFileSync(
      csvPath,
      ['seconds,used_memory_delta,jobs,records,raw_bytes,exact_jobs,payload_bytes,unknown_jobs']
        .concat(
          this.samples.map((s) =>
            [s.at.toFixed(2), s.usedDelta, s.jobs, s.records, Math.round(s.rawBytes), s.exactJobs, s.payloadBytes, s.unknownJobs].join(','),
          ),
        )
        .join('\n') + '\n',
    );
    const pct = (s: RedisSample): number | null => (s.rawBytes > 0 ? (100 * s.usedDelta) / s.rawBytes : null);
    let atPeak: RedisMemoryFigures['atPeak'] = null;
    let atPeakQueue: RedisMemoryFigures['atPeakQueue'] = null;
    for (const s of this.samples) {
      if (!atPeak || s.usedDelta > atPeak.usedDelta) atPeak = { ...s, percent: pct(s) };
      if (!atPeakQueue || s.rawBytes > atPeakQueue.rawBytes) atPeakQueue = { ...s, percent: pct(s) };
    }
    let maxPercentHalfFull: RedisMemoryFigures['maxPercentHalfFull'] = null;
    for (const s of this.samples) {
      const p = pct(s);
      if (p === null || !atPeakQueue || s.rawBytes < atPeakQueue.rawBytes / 2) continue;
      if (!maxPercentHalfFull || p > maxPercentHalfFull.percent) maxPercentHalfFull = { ...s, percent: p };
    }
    const exactJobs = this.samples.reduce((a, s) => a + s.exactJobs, 0);
    const allJobs = this.samples.reduce((a, s) => a + s.jobs, 0);
    const unknownJobs = this.samples.reduce((a, s) => a + s.unknownJobs, 0);
    const method =
      `every ${this.intervalMs} ms, in one MULTI: INFO memory used_memory minus its value when the backfill started, and the ids ` +
      `of the index queue's ${QUEUED.join('/')} jobs; the share is over the raw feed bytes ` +
      `(lines with their newline) of those jobs' records; a job's raw bytes are the ` +
      `normalize phase's sizes of its batch's accepted lines for its chunk (chunks hold consecutive accepted records; the ` +
      `chunk's offset from the counts of the earlier chunks seen queued) for ${allJobs ? ((100 * exactJobs) / allJobs).toFixed(1) : '0'}% ` +
      `of job readings, else count × its batch's average accepted line size` +
      (unknownJobs ? `; ${unknownJobs} job reading(s) not counted (done before their data was read)` : '') +
      (acceptedOk ? '' : ' (for all: the batch log accepted other records than the normalize phase)') +
      (this.error ? `; some samples failed: ${(this.error as Error).message}` : '');
    const judged = atPeak?.percent ?? null;
    return {
      method,
      intervalMs: this.intervalMs,
      samples: this.samples.length,
      baselineUsedMemory: this.baseline,
      atPeak,
      atPeakQueue,
      maxPercentHalfFull,
      targetPercent: REDIS_TARGET_PERCENT,
      meetsTarget: judged === null ? null : judged <= REDIS_TARGET_PERCENT,
      csv: csvPath,
    };
  }
}
