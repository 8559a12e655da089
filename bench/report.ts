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

const round = (n: number, d = 2): number => Math.round(n * 10 ** d) / 10 ** d;
const mbps = (p: PhaseResult): number => p.bytes / 1e6 / p.seconds;

/** MB/s of `phase` divided by MB/s of the raw limit measured in the same run. */
export function ratio(report: BenchReport, phase: 'normalize' | 'e2e'): number {
  return mbps(report.phases[phase]) / mbps(report.phases.raw);
}

/** True when the end-to-end store holds exactly the manifest's ids. */
export function verified(report: BenchReport): boolean {
  const e = report.phases.e2e;
  return e.stored === e.expected && e.idsMatch;
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
        feedStageSeconds: round(e.feedStageSeconds, 3),
        feedBusySeconds: round(e.feedBusySeconds, 3),
        cpuSeconds: Object.fromEntries(Object.entries(e.cpu).map(([k, v]) => [k, { self: round(v.self), children: round(v.children) }])),
        summary: e.summary,
      },
    },
    ratios: { normalizeToRaw: round(ratio(report, 'normalize'), 3), e2eToRaw: round(ratio(report, 'e2e'), 3) },
    verification: { stored: e.stored, expected: e.expected, idsMatch: e.idsMatch, ok: verified(report) },
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

const int = (n: number): string => Math.round(n).toLocaleString('en-US');

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
  const ok = verified(report);
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
    `e2e outcome: ${e2e.summary.batches.ok} batches ok, ${e2e.summary.batches.failed} failed; ` +
      `${int(e2e.summary.records.indexed)} indexed, ${int(e2e.summary.records.rejected)} rejected (planted malformed lines: ${int(f.lines - f.records)})`,
    ok
      ? `verified: the store holds exactly the manifest's ${int(e2e.expected)} expected ids`
      : `VERIFICATION FAILED: store holds ${int(e2e.stored)} rows, manifest expects ${int(e2e.expected)}` +
        (e2e.idsMatch ? '' : '; the stored ids are not the expected ids'),
  ].join('\n');
}
