import { SandtrailError } from '../errors/index.js';
import type { GtiClient } from '../gti/index.js';
import { decodeStream, type DecoderChoice } from './decoders.js';
import type { BatchHandle, FeedSource } from './FeedSource.js';
import type { MinuteId } from '../minute/index.js';
import { readTar, type TarEntry } from './readTar.js';

export interface ApiSourceOptions {
  client: GtiClient;
  /** `file_behaviours` (default) or `file-behaviours`. */
  pathSpelling?: string;
  decoder?: DecoderChoice;
  decoderThreads?: number;
}

/**
 * The GTI feed API: `/feeds/{file_behaviours}/{YYYYMMDDhhmm}` answers 302 to the bzip2 batch,
 * which is streamed through the decoder, never buffered whole. Errors keep their typed codes
 * (NotAvailableYet, rate limits, auth) so the feed worker can decide what to do with the minute.
 */
export class ApiSource implements FeedSource {
  readonly spec = 'api';

  constructor(private readonly o: ApiSourceOptions) {}

  /** The API has no listing: every minute of a range is asked for. */
  async listMinutes(): Promise<MinuteId[]> {
    return [];
  }

  /** API path of one minute's batch. */
  pathOf(batch: MinuteId): string {
    return `/feeds/${this.o.pathSpelling ?? 'file_behaviours'}/${batch}`;
  }

  /** Hourly packages lag ~2 hours; the tar is streamed, one minute entry at a time. */
  async openHour(hour: string): Promise<AsyncIterable<TarEntry> | null> {
    const dl = await this.o.client.openDownload(`/feeds/${this.o.pathSpelling ?? 'file_behaviours'}/hourly/${hour}`);
    if (!dl) return null;
    return readTar(decodeStream(dl.body, 'bz2', { decoder: this.o.decoder, threads: this.o.decoderThreads }));
  }

  async open(batch: MinuteId): Promise<BatchHandle | null> {
    const path = this.pathOf(batch);
    // Probe once so a missing minute is known before the stage starts; bytes() re-opens for each read.
    const first = await this.o.client.openDownload(path);
    if (!first) return null;
    // a batch is bzip2, never nothing: an empty answer is a bad transfer, fetched again like one cut short
    const empty = (): SandtrailError =>
      new SandtrailError('BATCH_CORRUPT', `download of ${path}: the answer had no bytes, where a bzip2 batch was expected`);
    if (first.bytes === 0) throw empty();
    let pending: typeof first | null = first;
    const { decoder, decoderThreads } = this.o;
    return {
      batch,
      origin: path,
      storedBytes: first.bytes,
      bytes: (signal?: AbortSignal) => {
        const take = async function* (this: ApiSource): AsyncGenerator<Buffer> {
          const dl = pending ?? (await this.o.client.openDownload(path, signal));
          pending = null;
          if (!dl) return;
          let bytes = 0;
          for await (const chunk of dl.body) {
            bytes += chunk.length;
            yield chunk;
          }
          if (bytes === 0) throw empty();
        }.call(this);
        return decodeStream(take, 'bz2', { decoder, threads: decoderThreads, signal });
      },
    };
  }
}
