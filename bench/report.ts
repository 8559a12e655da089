/** Turns the phase results into the printed table or one JSON object. */
import type { E2eResult } from './e2e.js';
import type { PhaseResult } from './inproc.js';

/** Everything one run measured. */
export interface BenchReport {
  machine: { cpus: number; node: string; decoder: string; loadAtStart: number; loadAtEnd: number };
  options: Record<string, unknown>;
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
  phases: { raw: PhaseResult; normalize: PhaseResult; e2e: E2eResult };
}

const int = (n: number): string => Math.round(n).toLocaleString('en-US');
const round = (n: number, d = 2): number => Math.round(n * 10 ** d) / 10 ** d;
const mbps = (p: PhaseResult): number => p.bytes / 1e6 / p.seconds;

/** MB/s of `phase` divided by MB/s of the raw limit measured in the same run. */
export function ratio(report: BenchReport, phase: 'normalize' | 'e2e'): number {
  return mbps(report.phases[phase]) / mbps(report.phases.raw);
}

/**
 * What is wrong with the end-to-end outcome, one sentence each; empty when the store holds exactly
 * the manifest's expected ids (as a set, with as many rows) and every batch of the feed went through.
 */
export function verificationProblems(report: BenchReport): string[] {
  const e = report.phases.e2e;
  const f = report.feed;
  const out: string[] = [];
  if (e.stored !== e.expected) out.push(`the store holds ${int(e.stored)} documents, the manifest expects ${int(e.expected)}`);
  if (!e.ids.idsMatch) {
    const ex = (ids: string[]): string => (ids.length ? ` (e.g. ${ids.map((id) => JSON.stringify(id)).join(', ')})` : '');
    out.push(
      `the stored ids are not the expected ids: ${int(e.ids.missing)} expected id(s) missing${ex(e.ids.examples.missing)}, ` +
        `${int(e.ids.unexpected)} unexpected id(s) stored${ex(e.ids.examples.unexpected)}`,
    );
  }
  const b = e.summary.batches;
  if (b.ok !== f.files || b.failed > 0 || b.pending > 0 || b.missing > 0) {
    const why = e.summary.failures
      .slice(0, 3)
      .map((x) => `${x.batch}: ${x.reason}`)
      .join('; ');
    out.push(`${b.ok} of ${f.files} batches ok (${b.failed} failed, ${b.missing} missing, ${b.pending} pending)${why ? `: ${why}` : ''}`);
  }
  if (e.lines !== f.lines || e.bytes !== f.bytesUncompressed) {
    out.push(
      `the batch log shows ${int(e.lines)} lines / ${int(e.bytes)} bytes read, the feed has ${int(f.lines)} / ${int(f.bytesUncompressed)}`,
    );
  }
  return out;
}

/** True when the end-to-end store holds exactly the manifest's ids and the whole feed went through. */
export function verified(report: BenchReport): boolean {
  return verificationProblems(report).length === 0;
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
    peakRssMb: Object.fromEntries(p.peaks.map((x) => [x.role, round(x.peakMb, 1)])),
  });
  const e = report.phases.e2e;
  return {
    ...report,
    phases: {
      raw: phase(report.phases.raw),
      normalize: phase(report.phases.normalize),
      e2e: {
        ...phase(e),
        redis: e.redis,
        feedStageSeconds: round(e.feedStageSeconds, 3),
        feedBusySeconds: round(e.feedBusySeconds, 3),
        cpuSeconds: Object.fromEntries(Object.entries(e.cpu).map(([k, v]) => [k, { self: round(v.self), children: round(v.children) }])),
        summary: e.summary,
      },
    },
    ratios: { normalizeToRaw: round(ratio(report, 'normalize'), 3), e2eToRaw: round(ratio(report, 'e2e'), 3) },
    verification: {
      stored: e.stored,
      expected: e.expected,
      idsMatch: e.idsMatch,
      missingIds: e.ids.missing,
      unexpectedIds: e.ids.unexpected,
      ok: verified(report),
      problems: verificationProblems(report),
    },
  };
}

function table(rows: string[][], rightAlign: (col: number) => boolean): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  return rows
    .map((r) =>
      r
        .map((cell, c) => (rightAlign(c) ? cell.padStart(widths[c]!) : cell.padEnd(widths[c]!)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** The human-readable report: throughput table, per-process peak RSS, ratios, verification. */
export function toText(report: BenchReport): string {
  const { raw, normalize, e2e } = report.phases;
  const phases: PhaseResult[] = [raw, normalize, e2e];
  const label = { raw: 'raw (decode+split+JSON.parse)', normalize: 'normalize (in process)', e2e: 'e2e (Redis + 2 workers → SQLite)' };
  const heaviest = (p: PhaseResult): string => {
    const top = p.peaks[0];
    return top ? `${top.peakMb.toFixed(0)} (${top.role})` : '-';
  };
  const main = table(
    [
      ['phase', 'records', 'MB (uncompr.)', 'seconds', 'records/s', 'MB/s', 'peak RSS MB (largest process)'],
      ...phases.map((p) => [
        label[p.phase],
        int(p.lines),
        (p.bytes / 1e6).toFixed(1),
        p.seconds.toFixed(2),
        int(p.lines / p.seconds),
        mbps(p).toFixed(1),
        heaviest(p),
      ]),
    ],
    (c) => c > 0 && c < 6,
  );
  const roles = [...new Set(phases.flatMap((p) => p.peaks.map((x) => x.role)))];
  const cell = (p: PhaseResult, role: string): string => {
    const x = p.peaks.find((y) => y.role === role);
    return x ? `${x.peakMb.toFixed(1)}${x.processes > 1 ? ` (${x.processes} procs)` : ''}` : '-';
  };
  const rss = table(
    [['peak RSS (MB) per process', 'raw', 'normalize', 'e2e'], ...roles.map((r) => [r, ...phases.map((p) => cell(p, r))])],
    (c) => c > 0,
  );
  const cpu = Object.entries(e2e.cpu)
    .map(([k, v]) => `${k} ${v.self.toFixed(1)} s${v.children > 0.05 ? ` + decoders ${v.children.toFixed(1)} s` : ''}`)
    .join(', ');
  const f = report.feed;
  const problems = verificationProblems(report);
  return [
    `sandtrail bench: ${report.machine.cpus} cores, Node ${report.machine.node}, bzip2 decoder ${report.machine.decoder}, ` +
      `load average ${report.machine.loadAtStart} at start, ${report.machine.loadAtEnd} at end`,
    `feed: ${f.files} files, ${int(f.lines)} lines (${int(f.records)} records, ${int(f.expectedIds)} unique ids), ` +
      `${(f.bytesUncompressed / 1e6).toFixed(1)} MB uncompressed / ${(f.bytesCompressed / 1e6).toFixed(1)} MB bz2` +
      (f.reused ? ' (reused)' : ` (generated in ${f.generateSeconds.toFixed(1)} s)`),
    '',
    main,
    '',
    rss,
    '',
    `normalize / raw MB/s: ${ratio(report, 'normalize').toFixed(3)}`,
    `e2e / raw MB/s:       ${ratio(report, 'e2e').toFixed(3)}`,
    `e2e feed stage (batch log): first start to last finish ${e2e.feedStageSeconds.toFixed(2)} s, ` +
      `sum of batch times ${e2e.feedBusySeconds.toFixed(2)} s; index tail after the last batch ${(e2e.seconds - e2e.feedStageSeconds).toFixed(2)} s`,
    `e2e CPU seconds: ${cpu} (wall ${e2e.seconds.toFixed(1)} s × ${report.machine.cpus} cores = ${(e2e.seconds * report.machine.cpus).toFixed(1)} core-s)`,
    `e2e Redis: ${e2e.redis}`,
    `e2e outcome: ${e2e.summary.batches.ok} batches ok, ${e2e.summary.batches.failed} failed; ` +
      `${int(e2e.summary.records.indexed)} indexed, ${int(e2e.summary.records.rejected)} rejected (planted malformed lines: ${int(f.lines - f.records)})`,
    problems.length === 0
      ? `verified: the store holds exactly the manifest's ${int(e2e.expected)} expected ids`
      : `VERIFICATION FAILED: ${problems.join('; ')}`,
  ].join('\n');
}
