import { readdir, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { SandtrailError } from '../errors/index.js';
import { compressionOf, decodeStream, type DecoderChoice } from './decoders.js';
import type { BatchHandle, FeedSource } from './FeedSource.js';
import { isMinuteId, type MinuteId } from '../minute/index.js';
import { readTar, type TarEntry } from './readTar.js';

const MINUTE_IN_NAME = /(?<!\d)(\d{12})(?!\d)/;
/** When a minute has several files, the one the feed itself serves wins. */
const RANK = { bz2: 0, gz: 1, none: 2 } as const;

/** The names a directory source reads, as told to an operator whose directory holds none. */
export const BATCH_FILE_NAMES =
  'batch files named by their UTC minute, a 12-digit YYYYMMDDhhmm in the name (202611010000.jsonl.bz2, file_behaviours_202611010000.gz, ...): JSON lines, plain, bzip2 or gzip';

/** An hourly package of minute files (`YYYYMMDDhh….tar.bz2`), read by `--hourly`. */
export const HOURLY_PACKAGE_NAME = /(?<!\d)\d{10}(?!\d).*\.tar\.bz2$/;

export interface DirectorySourceOptions {
  decoder?: DecoderChoice;
  decoderThreads?: number;
}

/**
 * Reads batch files from a directory: any file whose name holds a 12-digit UTC minute
 * (`202611010000.jsonl.bz2`, `file_behaviours_202611010000.gz`, ...), JSON lines, optionally
 * bzip2 or gzip compressed.
 */
export class DirectorySource implements FeedSource {
  readonly spec: string;
  private readonly dir: string;
  private index: Map<MinuteId, string> | undefined;

  constructor(
    dir: string,
    private readonly opts: DirectorySourceOptions = {},
  ) {
    this.dir = resolve(dir);
    this.spec = `dir:${this.dir}`;
  }

  async listMinutes(range: { from?: MinuteId; to?: MinuteId } = {}): Promise<MinuteId[]> {
    const index = await this.scan();
    return [...index.keys()].filter((m) => (!range.from || m >= range.from) && (!range.to || m <= range.to)).sort();
  }

  async open(batch: MinuteId): Promise<BatchHandle | null> {
    let file = (this.index ?? (await this.scan())).get(batch);
    // the directory may have gained files since the last scan (a mirror being filled)
    if (!file) file = (await this.scan()).get(batch);
    if (!file) return null;
    const path = join(this.dir, file);
    const info = await stat(path).catch(() => null);
    if (!info) return null;
    const compression = compressionOf(file);
    const { decoder, decoderThreads } = this.opts;
    return {
      batch,
      origin: path,
      storedBytes: info.size,
      bytes: (signal?: AbortSignal) => decodeStream(path, compression, { decoder, threads: decoderThreads, signal }),
    };
  }

  /** A `YYYYMMDDhh*.tar.bz2` package in the directory, when there is one. */
  async openHour(hour: string): Promise<AsyncIterable<TarEntry> | null> {
    const names = await readdir(this.dir).catch(() => [] as string[]);
    const name = names.find((n) => new RegExp(`(?<!\\d)${hour}(?!\\d).*\\.tar\\.bz2$`).test(n));
    if (!name) return null;
    return readTar(decodeStream(join(this.dir, name), 'bz2', { decoder: this.opts.decoder, threads: this.opts.decoderThreads }));
  }

  private async scan(): Promise<Map<MinuteId, string>> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch (err) {
      throw new SandtrailError('SOURCE_NOT_FOUND', `cannot read feed directory ${this.dir}: ${(err as Error).message}`);
    }
    const index = new Map<MinuteId, string>();
    for (const name of names) {
      if (/\.(tar|json)$|\.tar\.|manifest/i.test(name)) continue;
      const m = MINUTE_IN_NAME.exec(name);
      if (!m || !isMinuteId(m[1] as string)) continue;
      const minute = m[1] as MinuteId;
      const prev = index.get(minute);
      if (!prev || RANK[compressionOf(name)] < RANK[compressionOf(prev)]) index.set(minute, name);
    }
    this.index = index;
    return index;
  }
}
