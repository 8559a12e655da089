import { compressionOf, decodeStream, type DecoderChoice } from './decoders.js';
import type { FeedSource } from './FeedSource.js';
import type { MinuteId } from '../minute/index.js';
import type { TarEntry } from './readTar.js';

/** The minute a package entry holds, from its file name. */
export function minuteOfEntry(name: string): MinuteId | null {
  const m = /(?<!\d)(\d{12})(?!\d)/.exec(name.split('/').pop() ?? '');
  return m ? (m[1] as MinuteId) : null;
}

/**
 * A one-minute source over an entry of an hourly package, so the feed stage runs unchanged on
 * it. Entries are compressed minute files (bzip2 or gzip, told by name or magic bytes) or plain.
 */
export function entrySource(minute: MinuteId, entry: TarEntry, decoder?: DecoderChoice): FeedSource {
  const d = entry.data;
  const byMagic = d[0] === 0x42 && d[1] === 0x5a && d[2] === 0x68 ? 'bz2' : d[0] === 0x1f && d[1] === 0x8b ? 'gz' : 'none';
  const compression = compressionOf(entry.name) !== 'none' ? compressionOf(entry.name) : byMagic;
  return {
    spec: `entry:${entry.name}`,
    listMinutes: async () => [minute],
    open: async (batch) =>
      batch !== minute
        ? null
        : {
            batch,
            origin: entry.name,
            storedBytes: d.length,
            bytes: (signal?: AbortSignal) =>
              decodeStream(
                (async function* () {
                  yield d;
                })(),
                compression,
                { decoder, signal },
              ),
          },
  };
}
