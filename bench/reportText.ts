/** The human-readable report: throughput, peak RSS per process, ratios, Redis memory, verification. */
import type { PhaseResult } from './inproc.js';
import type { RedisSample } from './redisMem.js';
import { esTarget, int, mbps, ratios, verificationProblems, type BenchReport } from './report.js';

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

const mb = (bytes: number): string => (bytes / 1e6).toFixed(1);

function redisLine(s: (RedisSample & { percent: number | null }) | null): string {
  if (!s) return 'no sample';
  return (
    `+${mb(s.usedDelta)} MB used_memory at ${s.at.toFixed(1)} s with ${s.jobs} index job(s) / ${int(s.records)} records queued = ` +
    `${mb(s.rawBytes)} MB raw JSON (payloads ${mb(s.payloadBytes)} MB${s.rawBytes > 0 ? `, ${((100 * s.payloadBytes) / s.rawBytes).toFixed(1)}% of raw` : ''}) → ${s.percent === null ? 'n/a (nothing queued)' : `${s.percent.toFixed(1)}%`}`
  );
}

/** The report as text. */
export function toText(report: BenchReport): string {
  const { raw, normalize, official, floor, normalizeCli, e2e, backfill } = report.phases;
  const m = report.machine;
  const phases: PhaseResult[] = [
    raw,
    normalize,
    ...(official.skipped ? [] : [{ ...official, phase: 'official' as const }]),
    { ...floor, phase: 'floor' },
    normalizeCli,
    e2e,
    backfill,
  ];
  const workers = `${report.options.feedWorkers ?? 1}+${report.options.indexWorkers ?? 1}`;
  const label: Record<PhaseResult['phase'], string> = {
    raw: 'raw (decode+split+JSON.parse)',
    normalize: 'normalize (in process)',
    official: 'official client (python3 bz2+json.loads)',
    floor: 'store floor (parse, store lines as they are)',
    normalizeCli: 'normalize (CLI) > /dev/null',
    e2e: `e2e (Redis + ${workers} worker procs → SQLite)`,
    backfill: 'backfill (CLI, start-up+teardown)',
  };
  const heaviest = (p: PhaseResult): string => {
    const top = p.peaks[0];
    return top ? `${top.peakMb.toFixed(0)} (${top.role})` : '-';
  };
  const rows = phases.map((p) => [
    label[p.phase],
    int(p.lines),
    mb(p.bytes),
    p.seconds.toFixed(2),
    int(p.lines / p.seconds),
    mbps(p).toFixed(1),
    p.cpuSeconds === undefined ? '-' : p.cpuSeconds.toFixed(1),
    heaviest(p),
  ]);
  if (official.skipped)
    rows.splice(2, 0, [`official client: skipped: ${official.reason === 'no python3 on PATH' ? 'no python3' : official.reason}`]);
  const main = table(
    [['phase', 'records', 'MB (uncompr.)', 'seconds', 'records/s', 'MB/s', 'CPU s', 'peak RSS MB (largest process)'], ...rows],
    (c) => c > 0 && c < 7,
  );
  const roles = [...new Set(phases.flatMap((p) => p.peaks.map((x) => x.role)))];
  const cell = (p: PhaseResult, role: string): string => {
    const x = p.peaks.find((y) => y.role === role);
    return x ? `${x.peakMb.toFixed(1)}${x.processes > 1 ? ` (${x.processes} procs)` : ''}` : '-';
  };
  const rss = table(
    [['peak RSS (MB) per process', ...phases.map((p) => p.phase)], ...roles.map((r) => [r, ...phases.map((p) => cell(p, r))])],
    (c) => c > 0,
  );
  const cpu = Object.entries(e2e.cpu)
    .map(([k, v]) => `${k} ${v.self.toFixed(1)} s${v.children > 0.05 ? ` + decoders ${v.children.toFixed(1)} s` : ''}`)
    .join(', ');
  const r = ratios(report);
  const rt = (v: number | null): string => (v === null ? 'n/a (official client skipped)' : v.toFixed(3));
  const rm = e2e.redisMemory;
  const f = report.feed;
  const problems = verificationProblems(report);
  const loads = Object.entries(m.loadAtPhase)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
  return [
    `sandtrail bench: ${m.cpus} cores, Node ${m.node}, bzip2 decoder ${m.decoder} (raw, normalize) / ${m.pipelineDecoder} (e2e, backfill), ${m.python ?? 'no python3'}`,
    `load average (1 min): ${m.loadAtStart} at start; at each phase's start: ${loads}; ${m.loadAtEnd} at end`,
    `feed: ${f.files} files, ${int(f.lines)} lines (${int(f.records)} records, ${int(f.expectedIds)} unique ids), ` +
      `${mb(f.bytesUncompressed)} MB uncompressed / ${mb(f.bytesCompressed)} MB bz2` +
      (f.reused ? ' (reused)' : ` (generated in ${f.generateSeconds.toFixed(1)} s)`) +
      (report.built ? `; CLI rebuilt first (${report.built})` : ''),
    '',
    main,
    '',
    rss,
    '',
    `MB/s ratios: normalize/raw ${rt(r.normalizeToRaw)}, official/raw ${rt(r.officialToRaw)}`,
    `  e2e/raw ${rt(r.e2eToRaw)}, backfill/raw ${rt(r.backfillToRaw)}, e2e/official ${rt(r.e2eToOfficial)}, backfill/official ${rt(r.backfillToOfficial)}`,
    `  normalize (CLI)/official ${rt(r.normalizeCliToOfficial)}; backfill/official, both processes timed start to exit ${rt(r.backfillToOfficialProcess)}; ` +
      `CPU seconds backfill/official ${rt(r.backfillCpuToOfficial)}`,
    `  store floor/official ${rt(r.floorToOfficial)}, CPU seconds store floor/official ${rt(r.floorCpuToOfficial)}; ` +
      `backfill/store floor, both timed start to exit ${r.backfillToFloorProcess.toFixed(3)}`,
    `store floor: ${int(floor.stored)} distinct ids stored; loop ${floor.seconds.toFixed(2)} s, process wall ${floor.wallSeconds.toFixed(2)} s (rates use the loop time)`,
    official.skipped
      ? null
      : `official client: ${official.python}; read loop ${official.seconds.toFixed(2)} s, process wall ${official.wallSeconds.toFixed(2)} s (rates use the loop time)`,
    `e2e feed stage (batch log): first start to last finish ${e2e.feedStageSeconds.toFixed(2)} s, ` +
      `sum of batch times ${e2e.feedBusySeconds.toFixed(2)} s; index tail after the last batch ${(e2e.seconds - e2e.feedStageSeconds).toFixed(2)} s`,
    `e2e CPU seconds: ${cpu} (wall ${e2e.seconds.toFixed(1)} s × ${m.cpus} cores = ${(e2e.seconds * m.cpus).toFixed(1)} core-s)`,
    `e2e Redis: ${e2e.redis}; outcome: ${e2e.summary.batches.ok} batches ok, ${e2e.summary.batches.failed} failed; ` +
      `${int(e2e.summary.records.indexed)} indexed, ${int(e2e.summary.records.rejected)} rejected (planted malformed lines: ${int(f.lines - f.records)})`,
    ...(rm.meetsTarget === null
      ? [
          `e2e Redis memory per queued record (target ≤ ${rm.targetPercent}%): not measured: none of the ${rm.samples} samples ` +
            `(every ${rm.intervalMs} ms) saw a queued index job (a run this short cannot show one)`,
        ]
      : [
          `e2e Redis memory per queued record (target ≤ ${rm.targetPercent}%): ${rm.meetsTarget ? 'met' : 'MISSED'} ` +
            `(${rm.atPeak?.percent?.toFixed(1)}% at peak used_memory)`,
          `  at peak used_memory:   ${redisLine(rm.atPeak)}  (judged)`,
          `  at the longest queue:  ${redisLine(rm.atPeakQueue)}`,
          `  highest share while the queue held ≥ half its peak raw bytes: ${redisLine(rm.maxPercentHalfFull)}`,
          `  method: ${rm.method}; ${rm.samples} samples in ${rm.csv}`,
        ]),
    `backfill: ${backfill.command} (cwd = repository root); ${backfill.redis}; exit ${backfill.exitCode ?? backfill.exitSignal}; ` +
      `CPU ${backfill.cpuSeconds.toFixed(1)} s (CLI + children); ` +
      (backfill.summary ? `${backfill.summary.batches.ok} batches ok, ${int(backfill.summary.records.indexed)} indexed` : 'no summary'),
    ...esLines(report),
    problems.length === 0
      ? `verified: the e2e and backfill stores${report.phases.backfillEs ? ' (SQLite and Elasticsearch)' : ''} each hold exactly the manifest's ${int(e2e.expected)} expected ids; every batch ok`
      : `VERIFICATION FAILED: ${problems.join('; ')}`,
  ]
    .filter((l) => l !== null)
    .join('\n');
}

/** The Elasticsearch backfill beside the SQLite one: rate, and what a behaviour weighs in each store. */
function esLines(report: BenchReport): string[] {
  const es = report.phases.backfillEs;
  if (!es) return ['backfill es: left out (--skip-elasticsearch)'];
  const sq = report.phases.backfill;
  const f = es.elasticsearch;
  const t = esTarget(report);
  const per = (bytes: number, n: number): string => (n > 0 ? int(bytes / n) : '-');
  return [
    `backfill es: ${es.command}; exit ${es.exitCode ?? es.exitSignal}; ${int(es.stored / es.seconds)} docs/s, ` +
      `${(es.bytes / 1e6 / es.seconds).toFixed(2)} MB/s (SQLite: ${int(sq.stored / sq.seconds)} docs/s, ${(sq.bytes / 1e6 / sq.seconds).toFixed(2)} MB/s); ` +
      `CPU ${es.cpuSeconds.toFixed(1)} s of the CLI` +
      (es.nodeCpuSeconds === undefined
        ? " (the node's own not measured: ELASTICSEARCH_URL's cluster)"
        : ` + ${es.nodeCpuSeconds.toFixed(1)} s of the node`),
    `  ingest: ${t ? t.ratio.toFixed(2) : '-'} × the SQLite backfill's behaviours/s` +
      (t?.judged ? ` (target ≥ ${t.min}: ${t.met ? 'met' : 'MISSED'})` : ' (not judged: --min-es-ratio 0)'),
    `  bytes per behaviour: Elasticsearch primaries ${f ? per(f.primaryBytes, es.stored) : '-'} as written, ` +
      `${f ? per(f.primaryBytesMerged, es.stored) : '-'} merged (${f?.primaryShards ?? '-'} primary shards); SQLite file ${per(sq.storeBytes, sq.stored)}`,
  ];
}
