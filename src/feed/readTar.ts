import { SandtrailError } from '../errors/index.js';

/** One regular file of a tar archive, held whole: hourly packages hold one compressed minute per entry. */
export interface TarEntry {
  name: string;
  data: Buffer;
}

const BLOCK = 512;
/** An entry larger than this is refused rather than buffered (a minute batch compresses far below it). */
const MAX_ENTRY_BYTES = 1024 * 1024 * 1024;

function field(h: Buffer, start: number, len: number): string {
  const raw = h.subarray(start, start + len);
  const end = raw.indexOf(0);
  return raw.subarray(0, end === -1 ? len : end).toString('utf8');
}

/**
 * Streams the regular files of a (ustar/GNU) tar archive from decoded bytes, one entry at a
 * time; directories and metadata entries are skipped. Memory is one entry plus one input chunk.
 */
export async function* readTar(chunks: AsyncIterable<Buffer>): AsyncGenerator<TarEntry> {
  let buf: Buffer = Buffer.alloc(0);
  let need = BLOCK;
  let header: { name: string; size: number; type: string } | null = null;
  let longName: string | null = null;
  for await (const chunk of chunks) {
    buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk]);
    while (buf.length >= need) {
      if (!header) {
        const h = buf.subarray(0, BLOCK);
        buf = buf.subarray(BLOCK);
        if (h.every((b) => b === 0)) {
          need = BLOCK;
          continue; // end-of-archive padding
        }
        const size = parseInt(field(h, 124, 12).trim() || '0', 8);
        if (!Number.isFinite(size) || size < 0 || size > MAX_ENTRY_BYTES) throw new SandtrailError('BATCH_CORRUPT', 'tar: bad entry size');
        const prefix = field(h, 345, 155);
        const name: string = longName ?? (prefix ? `${prefix}/${field(h, 0, 100)}` : field(h, 0, 100));
        longName = null;
        header = { name, size, type: field(h, 156, 1) || '0' };
        need = Math.ceil(size / BLOCK) * BLOCK;
        if (need === 0) {
          if (header.type === '0') yield { name: header.name, data: Buffer.alloc(0) };
          header = null;
          need = BLOCK;
        }
        continue;
      }
      const data: Buffer = Buffer.from(buf.subarray(0, header.size));
      buf = buf.subarray(need);
      if (header.type === 'L') longName = data.toString('utf8').replace(/\0+$/, '');
      else if (header.type === '0') yield { name: header.name, data };
      header = null;
      need = BLOCK;
    }
  }
  if (header) throw new SandtrailError('BATCH_CORRUPT', `tar: archive ends inside ${header.name}`);
}
