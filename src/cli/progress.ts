import type { BackfillProgress } from '../queue/index.js';

const WIDTH = 20;

function duration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '--';
  const s = Math.round(ms / 1000);
  return s >= 3600
    ? `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`
    : s >= 60
      ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`
      : `${s}s`;
}

/** One-line progress bar with ETA, redrawn in place; only used when stderr is a terminal. */
export function progressLine(p: BackfillProgress): string {
  // A batch counts half when read and half when its chunks are indexed, so the bar keeps moving.
  const indexShare = p.chunksKnown > 0 ? p.chunksDone / p.chunksKnown : 1;
  const done = p.batchesTotal === 0 ? 1 : (p.batchesDone / p.batchesTotal) * (0.5 + 0.5 * indexShare);
  const filled = Math.round(done * WIDTH);
  const rate = p.elapsedMs > 0 ? (p.recordsAccepted * 1000) / p.elapsedMs : 0;
  const eta = done > 0 ? (p.elapsedMs * (1 - done)) / done : Number.NaN;
  return `[${'#'.repeat(filled)}${'.'.repeat(WIDTH - filled)}] ${p.batchesDone}/${p.batchesTotal} batches ${p.chunksDone}/${p.chunksKnown} chunks ${p.recordsAccepted} rec ${rate.toFixed(0)}/s ETA ${duration(eta)}`;
}

/** A progress reporter for stderr: redraws on a TTY, stays silent otherwise (logs carry progress there). */
export function createProgressReporter(stream: NodeJS.WriteStream = process.stderr): { update(p: BackfillProgress): void; done(): void } {
  if (!stream.isTTY) return { update: () => undefined, done: () => undefined };
  let last = 0;
  return {
    update(p) {
      const now = Date.now();
      if (now - last < 200 && p.batchesDone < p.batchesTotal) return;
      last = now;
      stream.write(`\r${progressLine(p).slice(0, (stream.columns || 120) - 1)}\x1b[K`);
    },
    done() {
      stream.write('\n');
    },
  };
}
