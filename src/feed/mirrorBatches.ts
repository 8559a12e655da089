import { createWriteStream } from 'node:fs';
import { rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { errorCode, messageOf, SandtrailError } from '../errors/index.js';
import { makeDirs } from '../files/index.js';
import type { GtiClient } from '../gti/index.js';
import type { MinuteId } from '../minute/index.js';
import { decodeStream, type DecoderChoice } from './decoders.js';

export interface MirrorOptions {
  client: GtiClient;
  minutes: readonly MinuteId[];
  out: string;
  pathSpelling?: string;
  /** Tries per minute for transient failures (5xx, cut downloads, 429). */
  attempts?: number;
  backoffMs?: number;
  /** The wait after a 429 without Retry-After (feed.rateLimitDelayMs); a 429 spends no try. */
  rateLimitDelayMs?: number;
  /** The decoder a download is checked with before it is kept (feed.decoder, feed.decoderThreads). */
  decoder?: DecoderChoice;
  decoderThreads?: number;
  /** Stops the run: the download under way is dropped (its `.part` removed) and no other starts. */
  signal?: AbortSignal;
  onMinute?: (minute: MinuteId, outcome: MirrorOutcome, reason?: string) => void;
}

export type MirrorOutcome = 'downloaded' | 'skipped' | 'missing' | 'not_available' | 'failed';
export type MirrorSummary = Record<MirrorOutcome, number> & { interrupted: boolean };

/** 429s one minute may meet before they count as tries (the limit never lifting is a failure too). */
const MAX_RATE_LIMITED = 20;
/** The longest wait a 429's Retry-After is followed for, as in the feed stage. */
const MAX_RATE_LIMIT_WAIT_MS = 5 * 60_000;

/** File name of a mirrored minute: what `--source dir:` reads back. */
export const mirrorFileName = (minute: MinuteId): string => `${minute}.jsonl.bz2`;

/**
 * Downloads raw batches verbatim (bzip2 bytes as served) so a team can archive them before the
 * feed's 7-day retention ends. Each file is written to `.part`, decoded once to check it is whole
 * bzip2 (a cut transfer, a CRC error or a proxy's page is fetched again), and renamed then, so an
 * existing file is always whole and a re-run skips it.
 */
export async function mirrorBatches(o: MirrorOptions): Promise<MirrorSummary> {
  await makeDirs(o.out).catch((err: NodeJS.ErrnoException) => {
    const why = err.code === 'EEXIST' ? 'it is a file, not a directory' : err.code === 'EACCES' ? 'permission denied' : err.message;
    throw new SandtrailError('USAGE', `--out ${o.out} cannot be the mirror's directory: ${why}`);
  });
  const summary: MirrorSummary = { downloaded: 0, skipped: 0, missing: 0, not_available: 0, failed: 0, interrupted: false };
  for (const minute of o.minutes) {
    const outcome = o.signal?.aborted ? null : await mirrorOne(o, minute);
    if (outcome === null) {
      summary.interrupted = true;
      break;
    }
    summary[outcome.outcome] += 1;
    o.onMinute?.(minute, outcome.outcome, outcome.reason);
  }
  return summary;
}

/** A minute's outcome (with the last error when it failed); null when the run was stopped before it ended. */
async function mirrorOne(o: MirrorOptions, minute: MinuteId): Promise<{ outcome: MirrorOutcome; reason?: string } | null> {
  const final = join(o.out, mirrorFileName(minute));
  if (await stat(final).catch(() => null)) return { outcome: 'skipped' };
  const part = `${final}.part`;
  const attempts = o.attempts ?? 5;
  let limited = 0;
  for (let attempt = 1; ; attempt++) {
    try {
      const dl = await o.client.openDownload(`/feeds/${o.pathSpelling ?? 'file_behaviours'}/${minute}`, o.signal);
      if (!dl) return { outcome: 'missing' };
      const file = createWriteStream(part);
      try {
        for await (const chunk of dl.body) if (!file.write(chunk)) await new Promise<void>((r) => file.once('drain', () => r()));
      } finally {
        await new Promise<void>((resolve, reject) => file.end((err?: Error | null) => (err ? reject(err) : resolve())));
      }
      // kept only once it decodes whole: an archive is read back after the feed has dropped the minute
      for await (const _ of decodeStream(part, 'bz2', { decoder: o.decoder, threads: o.decoderThreads, signal: o.signal })) void _;
      await rename(part, final);
      return { outcome: 'downloaded' };
    } catch (err) {
      await rm(part, { force: true });
      if (o.signal?.aborted) return null;
      const code = errorCode(err);
      if (code === 'GTI_NOT_AVAILABLE_YET') return { outcome: 'not_available' };
      // refused by the API itself (the key, the account's access): every other minute would be too
      if (code === 'GTI_AUTH' || code === 'GTI_FORBIDDEN') throw err;
      const retryAfterS = (err as { details?: { retryAfterS?: number } }).details?.retryAfterS;
      // the API's rate limit spends no try, as in the feed stage: the minute is asked again after the wait
      const rateLimited = code === 'GTI_RATE_LIMITED' && ++limited <= MAX_RATE_LIMITED;
      if (rateLimited) attempt -= 1;
      else if (attempt >= attempts) return { outcome: 'failed', reason: `${code ?? 'ERROR'}: ${messageOf(err)}` };
      const waitMs = rateLimited
        ? Math.min(retryAfterS ? retryAfterS * 1000 : (o.rateLimitDelayMs ?? 60_000), MAX_RATE_LIMIT_WAIT_MS)
        : retryAfterS
          ? retryAfterS * 1000
          : (o.backoffMs ?? 1000) * 2 ** (attempt - 1);
      await sleep(waitMs, undefined, { signal: o.signal }).catch(() => undefined);
      if (o.signal?.aborted) return null;
    }
  }
}
