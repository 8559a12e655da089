/** The figures of one run: ratios, verification and the JSON form (the text form is in reportText.ts). */
import type { BackfillCliResult } from './backfill.js';
import type { E2eResult } from './e2e.js';
import type { FloorResult } from './floor.js';
import type { PhaseResult } from './inproc.js';
import type { OfficialResult } from './official.js';

/** Everything one run measured. */
export interface BenchReport {
  machine: {
    cpus: number;
    node: string;
    /** The decoder of the raw and normalize phases (every core). */
    decoder: string;
    /** The decoder the workers and the CLI spawn (feed.decoderThreads). */
    pipelineDecoder: string;
    python: string | null;
    loadAtStart: number;
    loadAtEnd: number;
    /** 1-minute load average when each phase started. */
    loadAtPhase: Record<string, number>;
  };
  options: Record<string, unknown>;
  /** Why `npm run build` ran before the phases, or null when dist/ was up to date. */
  built: string | null;
  feed: {
    dir: string;
    files: number;
    lines: number;
    records: number;
    expectedIds: number;
    bytesUncompressed: number;
    bytesCompressed: number;
    reused: boolean;
    generateSeconds: number;
  };
  phases: {
    raw: PhaseResult;
    normalize: PhaseResult;
    official: OfficialResult;
    floor: FloorResult;
    normalizeCli: PhaseResult;
    e2e: E2eResult;
    backfill: BackfillCliResult;
    /** The same command into Elasticsearch (absent with --skip-elasticsearch). */
    backfillEs?: BackfillCliResult;
  };
}

export const int = (n: number): string => Math.round(n).toLocaleString('en-US');
export const round = (n: number, d = 2): number => Math.round(n * 10 ** d) / 10 ** d;
export const mbps = (p: { bytes: number; seconds: number }): number => p.bytes / 1e6 / p.seconds;

/** MB/s ratios between phases of the same run; those against the official loop are null when it was skipped. */
export interface Ratios {
  normalizeToRaw: number;
  officialToRaw: number | null;
  e2eToRaw: number;
  backfillToRaw: number;
  e2eToOfficial: number | null;
  backfillToOfficial: number | null;
  /** The normalize command (start-up included) against the loop's MB/s. */
  normalizeCliToOfficial: number | null;
  /** The backfill command's MB/s against the Python process's, both timed from start to exit. */
  backfillToOfficialProcess: number | null;
  /** CPU seconds of the backfill command (its children included) over those of the Python process: lower is better. */
  backfillCpuToOfficial: number | null;
  /** The store floor (decode, parse, each line stored as it is, two threads) against the loop's MB/s. */
  floorToOfficial: number | null;
  /** CPU seconds of the store floor over those of the Python process. */
  floorCpuToOfficial: number | null;
  /** The backfill command against the store floor, both timed start to exit: what the pipeline's own work costs. */
  backfillToFloorProcess: number;
}

/** See {@link Ratios}. */
export function ratios(report: BenchReport): Ratios {
  const { raw, normalize, official, floor, normalizeCli, e2e, backfill } = report.phases;
  const off = official.skipped ? null : mbps(official);
  const offProcess = official.skipped ? null : mbps({ bytes: official.bytes, seconds: official.wallSeconds });
  const offCpu = official.skipped ? undefined : official.cpuSeconds;
  return {
    normalizeToRaw: mbps(normalize) / mbps(raw),
    officialToRaw: off === null ? null : off / mbps(raw),
    e2eToRaw: mbps(e2e) / mbps(raw),
    backfillToRaw: mbps(backfill) / mbps(raw),
    e2eToOfficial: off === null ? null : mbps(e2e) / off,
    backfillToOfficial: off === null ? null : mbps(backfill) / off,
    normalizeCliToOfficial: off === null ? null : mbps(normalizeCli) / off,
    backfillToOfficialProcess: offProcess === null ? null : mbps(backfill) / offProcess,
    backfillCpuToOfficial: offCpu && backfill.cpuSeconds !== undefined ? backfill.cpuSeconds / offCpu : null,
    floorToOfficial: off === null ? null : mbps(floor) / off,
    floorCpuToOfficial: offCpu ? floor.cpuSeconds / offCpu : null,
    backfillToFloorProcess: mbps(backfill) / mbps({ bytes: floor.bytes, seconds: floor.wallSeconds }),
  };
}

/** What is wrong with one store-writing phase's outcome, one sentence each. */
function storeProblems(name: string, p: E2eResult | BackfillCliResult, report: BenchReport): string[] {
  const f = report.feed;
  const out: string[] = [];
  if (p.stored !== p.expected) out.push(`${name}: the store holds ${int(p.stored)} documents, the manifest expects ${int(p.expected)}`);
  if (!p.ids.idsMatch) {
    const ex = (ids: string[]): string => (ids.length ? ` (e.g. ${ids.map((id) => JSON.stringify(id)).join(', ')})` : '');
    out.push(
      `${name}: the stored ids are not the expected ids: ${int(p.ids.missing)} expected id(s) missing${ex(p.ids.examples.missing)}, ` +
        `${int(p.ids.unexpected)} unexpected id(s) stored${ex(p.ids.examples.unexpected)}`,
    );
  }
  if (!p.summary) out.push(`${name}: no backfill summary`);
  else {
    const b = p.summary.batches;
    if (b.ok !== f.files || b.failed > 0 || b.pending > 0 || b.missing > 0 || p.summary.interrupted) {
      const why = p.summary.failures
        .slice(0, 3)
        .map((x) => `${x.batch}: ${x.reason}`)
        .join('; ');
      out.push(
        `${name}: ${b.ok} of ${f.files} batches ok (${b.failed} failed, ${b.missing} missing, ${b.pending} pending)${why ? `: ${why}` : ''}`,
      );
    }
  }
  if (p.lines !== f.lines || p.bytes !== f.bytesUncompressed) {
    out.push(
      `${name}: the batch log shows ${int(p.lines)} lines / ${int(p.bytes)} bytes read, the feed has ${int(f.lines)} / ${int(f.bytesUncompressed)}`,
    );
  }
  return out;
}

/**
 * What is wrong with the outcome, one sentence each; empty when both the e2e and the backfill
 * stores hold exactly the manifest's expected ids (as a set, with as many rows), every batch of
 * the feed went through, and the backfill command exited 0.
 */
export function verificationProblems(report: BenchReport): string[] {
  const b = report.phases.backfill;
  const out = [...storeProblems('e2e', report.phases.e2e, report), ...storeProblems('backfill', b, report)];
  if (b.exitCode !== 0) out.push(`backfill: \`${b.command}\` exited ${b.exitCode ?? b.exitSignal}`);
  const es = report.phases.backfillEs;
  if (es) {
    out.push(...storeProblems('backfill es', es, report));
    if (es.exitCode !== 0) out.push(`backfill es: \`${es.command}\` exited ${es.exitCode ?? es.exitSignal}`);
  }
  return out;
}

/** True when both stores hold exactly the manifest's ids and the whole feed went through. */
export function verified(report: BenchReport): boolean {
  return verificationProblems(report).length === 0;
}

/** The Elasticsearch backfill's behaviours/s as a share of the SQLite backfill's, judged against --min-es-ratio (0: not judged); null without the phase. */
export function esTarget(report: BenchReport): { ratio: number; min: number; met: boolean; judged: boolean } | null {
  const es = report.phases.backfillEs;
  if (!es) return null;
  const sq = report.phases.backfill;
  const ratio = es.stored / es.seconds / Math.max(1e-9, sq.stored / sq.seconds);
  const min = Number(report.options.minEsRatio ?? 0);
  return { ratio, min, met: ratio >= min, judged: min > 0 };
}

/** The Elasticsearch backfill's figures: the phase's, plus the store's weight per behaviour. */
function esPhase(p: BackfillCliResult): Record<string, unknown> {
  const es = p.elasticsearch;
  const per = (bytes: number): number => round(bytes / Math.max(1, p.stored), 1);
  return {
    records: p.lines,
    mb: round(p.bytes / 1e6, 3),
    seconds: round(p.seconds, 3),
    docsPerSecond: round(p.stored / p.seconds, 1),
    mbPerSecond: round(mbps(p), 2),
    cpuTotalSeconds: round(p.cpuSeconds),
    nodeCpuSeconds: p.nodeCpuSeconds === undefined ? null : round(p.nodeCpuSeconds),
    peakRssMb: Object.fromEntries(p.peaks.map((x) => [x.role, round(x.peakMb, 1)])),
    command: p.command,
    exitCode: p.exitCode,
    summary: p.summary,
    primaryShards: es?.primaryShards ?? null,
    primaryBytesPerBehaviour: es ? per(es.primaryBytes) : null,
    primaryBytesPerBehaviourMerged: es ? per(es.primaryBytesMerged) : null,
    stored: p.stored,
    idsMatch: p.ids.idsMatch,
  };
}

/** The report as one plain JSON-able object (rates and ratios computed, MB as 10^6 bytes). */
export function toJson(report: BenchReport): Record<string, unknown> {
  const phase = (p: PhaseResult): Record<string, unknown> => ({
    records: p.lines,
    ok: p.ok,
    mb: round(p.bytes / 1e6, 3),
    seconds: round(p.seconds, 3),
    recordsPerSecond: round(p.lines / p.seconds, 1),
    mbPerSecond: round(mbps(p), 2),
    /** Every process of the phase, children included. */
    cpuTotalSeconds: p.cpuSeconds === undefined ? null : round(p.cpuSeconds),
    peakRssMb: Object.fromEntries(p.peaks.map((x) => [x.role, round(x.peakMb, 1)])),
  });
  const { official: o, e2e: e, backfill: b } = report.phases;
  const m = e.redisMemory;
  const sample = (s: typeof m.atPeak): Record<string, unknown> | null =>
    s && {
      seconds: round(s.at, 2),
      usedMemoryDeltaMb: round(s.usedDelta / 1e6, 2),
      queuedJobs: s.jobs,
      queuedRecords: s.records,
      queuedRawMb: round(s.rawBytes / 1e6, 2),
      exactJobs: s.exactJobs,
      payloadMb: round(s.payloadBytes / 1e6, 2),
      percent: s.percent === null ? null : round(s.percent, 1),
    };
  return {
    ...report,
    phases: {
      raw: phase(report.phases.raw),
      normalize: phase(report.phases.normalize),
      normalizeCli: phase(report.phases.normalizeCli),
      official: o.skipped
        ? { skipped: true, reason: o.reason }
        : { ...phase({ ...o, phase: 'official' }), python: o.python, wallSeconds: round(o.wallSeconds, 3) },
      floor: {
        ...phase({ ...report.phases.floor, phase: 'floor' }),
        stored: report.phases.floor.stored,
        wallSeconds: round(report.phases.floor.wallSeconds, 3),
      },
      e2e: {
        ...phase(e),
        redis: e.redis,
        feedStageSeconds: round(e.feedStageSeconds, 3),
        feedBusySeconds: round(e.feedBusySeconds, 3),
        cpuSeconds: Object.fromEntries(Object.entries(e.cpu).map(([k, v]) => [k, { self: round(v.self), children: round(v.children) }])),
        redisMemory: {
          method: m.method,
          intervalMs: m.intervalMs,
          samples: m.samples,
          baselineUsedMemoryMb: round(m.baselineUsedMemory / 1e6, 2),
          atPeak: sample(m.atPeak),
          atPeakQueue: sample(m.atPeakQueue),
          maxPercentHalfFull: sample(m.maxPercentHalfFull),
          targetPercent: m.targetPercent,
          meetsTarget: m.meetsTarget,
          csv: m.csv,
        },
        summary: e.summary,
      },
      backfill: {
        ...phase(b),
        command: b.command,
        exitCode: b.exitCode,
        exitSignal: b.exitSignal,
        redis: b.redis,
        summary: b.summary,
        storeBytes: b.storeBytes,
        bytesPerBehaviour: round(b.storeBytes / Math.max(1, b.stored), 1),
      },
      ...(report.phases.backfillEs ? { backfillEs: { ...esPhase(report.phases.backfillEs), target: esTarget(report) } } : {}),
    },
    ratios: Object.fromEntries(Object.entries(ratios(report)).map(([k, v]) => [k, v === null ? null : round(v, 3)])),
    verification: {
      // the e2e store's figures at the top level, as before the backfill phase existed
      stored: e.stored,
      expected: e.expected,
      idsMatch: e.ids.idsMatch,
      missingIds: e.ids.missing,
      unexpectedIds: e.ids.unexpected,
      backfill: {
        stored: b.stored,
        expected: b.expected,
        idsMatch: b.ids.idsMatch,
        missingIds: b.ids.missing,
        unexpectedIds: b.ids.unexpected,
      },
      ok: verified(report),
      problems: verificationProblems(report),
    },
  };
}
