import cliProgress, { SingleBar, type Options } from 'cli-progress';
import type { BackfillProgress } from '../runner/index.js';

/** Steps of the bar; the share done is a fraction, so a fine scale keeps the ETA smooth. */
const STEPS = 1000;

/** Share of a backfill done: a batch counts half when read and half when its chunks are stored. */
export function shareDone(p: BackfillProgress): number {
  const indexShare = p.chunksKnown > 0 ? p.chunksDone / p.chunksKnown : 1;
  return p.batchesTotal === 0 ? 1 : (p.batchesDone / p.batchesTotal) * (0.5 + 0.5 * indexShare);
}

/**
 * cli-progress's time format, except for an ETA not known yet: cli-progress holds it as a string
 * ('0' before the first estimate, 'INF' while nothing has moved, 'NULL' when it cannot tell) and
 * would print ` 0s` or `NFs`; those show as `-`.
 */
export const formatEta: NonNullable<Options['formatTime']> = (t, options, roundTo) =>
  typeof t === 'number' && Number.isFinite(t) ? cliProgress.Format.TimeFormat(t, options, roundTo) : '-';

/**
 * A progress bar with ETA on stderr (cli-progress), redrawn in place on a terminal and silent
 * otherwise (logs carry progress there). Fits 80 columns.
 */
export function createProgressReporter(stream: NodeJS.WriteStream = process.stderr): { update(p: BackfillProgress): void; done(): void } {
  if (!stream.isTTY) return { update: () => undefined, done: () => undefined };
  const bar = new SingleBar({
    stream,
    format: '[{bar}] {batches} batches {chunks} chunks {records} rec {rate}/s ETA {eta_formatted}',
    barsize: 20,
    barCompleteChar: '#',
    barIncompleteChar: '.',
    hideCursor: false,
    etaBuffer: 50,
    fps: 5,
    formatTime: formatEta,
  });
  let started = false;
  return {
    update(p) {
      const payload = {
        batches: `${p.batchesDone}/${p.batchesTotal}`,
        chunks: `${p.chunksDone}/${p.chunksKnown}`,
        records: p.recordsAccepted,
        rate: p.elapsedMs > 0 ? Math.round((p.recordsAccepted * 1000) / p.elapsedMs) : 0,
      };
      const value = Math.round(shareDone(p) * STEPS);
      if (!started) bar.start(STEPS, value, payload);
      else bar.update(value, payload);
      started = true;
    },
    done() {
      if (started) bar.stop();
    },
  };
}
