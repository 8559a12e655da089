import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { makeDirs } from '../files/index.js';
import { addMinutes, isMinuteId, minuteToMs, type MinuteId } from '../minute/index.js';
import type { FeedManifest, ManifestFile, ManifestOversize, ManifestUpdate } from './FeedManifest.js';
import { canonicalId, generateRecord, identityOf, type FeedRecord, type RecordIdentity } from './generateRecord.js';
import { MALFORMED_KINDS, malformedLine } from './malformedLine.js';
import { EXTENSIONS, findCompressor, openBatchWriter, type Compression } from './openBatchWriter.js';
import { createPivotPools } from './PivotPools.js';
import { Rng } from './Rng.js';
import { VARIANT_NAMES, emptyTally, resolveVariantRates, type VariantRates } from './VariantRates.js';
import { encodedPowerShell } from './values.js';

/** Options of {@link writeFeed}. */
export interface WriteFeedOptions {
  /** Output directory (created when missing). */
  out: string;
  /** Same seed, same options → byte-identical uncompressed content (and compressed, same compressor). */
  seed: number | string;
  /** First minute, `YYYYMMDDhhmm`; default `202611010000`. */
  start?: MinuteId;
  /** Minutes in the range (missing ones included); default 1. With `targetBytes`, a minimum. */
  minutes?: number;
  /** Lines per minute file (records plus malformed lines); default 25. */
  perMinute?: number;
  /** Share of malformed lines; default 0.01. */
  malformedRate?: number;
  /** Share of big (100 KB+) records; default 0.02. */
  bigRate?: number;
  variants?: Partial<VariantRates>;
  /** Minutes of the range to leave without a file. */
  missingMinutes?: MinuteId[];
  /** Write one record line of exactly this many bytes (0 = off, the default). */
  oversizeBytes?: number;
  /** Minute holding the oversize line; default the middle minute of the range. */
  oversizeMinute?: MinuteId;
  /** Default `bz2`. */
  compression?: Compression;
  /** Write each file as two concatenated compressed streams (as pbzip2/lbzip2 may). */
  multiStream?: boolean;
  /** bzip2 program; default lbzip2 when on PATH, else bzip2. */
  compressor?: string;
  /** Keep adding minutes until this many uncompressed bytes are written. */
  targetBytes?: number;
}

/** Occurrence of an id the generator may later update. */
interface Seen {
  identity: RecordIdentity;
  minute: MinuteId;
  line: number;
  lmd: number;
}

/** Ids kept as candidates for updates and for "same file, other sandbox"; recent ones only, as upstream. */
const HISTORY = 5000;
/** Hard stop for `targetBytes` runs with a tiny per-minute size. */
const MAX_MINUTES = 1_000_000;

/**
 * Writes `<out>/<YYYYMMDDhhmm>.jsonl.bz2` (or `.gz`, or plain `.jsonl`) per minute plus
 * `<out>/manifest.json`, streaming every file through the compressor. Returns the manifest.
 */
export async function writeFeed(opts: WriteFeedOptions): Promise<FeedManifest> {
  const start = opts.start ?? '202611010000';
  const minutes = opts.minutes ?? 1;
  const perMinute = opts.perMinute ?? 25;
  const malformedRate = opts.malformedRate ?? 0.01;
  const bigRate = opts.bigRate ?? 0.02;
  const compression = opts.compression ?? 'bz2';
  const oversizeBytes = opts.oversizeBytes ?? 0;
  const targetBytes = opts.targetBytes ?? 0;
  const rates = resolveVariantRates(opts.variants);
  if (!isMinuteId(start)) throw new RangeError(`start must be a minute YYYYMMDDhhmm, got ${JSON.stringify(start)}`);
  if (!Number.isInteger(minutes) || minutes < 0) throw new RangeError(`minutes must be a non-negative integer, got ${minutes}`);
  if (!Number.isInteger(perMinute) || perMinute < 0) throw new RangeError(`perMinute must be a non-negative integer, got ${perMinute}`);
  if (targetBytes > 0 && perMinute === 0) throw new RangeError('targetBytes needs perMinute > 0');
  for (const [k, v] of [
    ['malformedRate', malformedRate],
    ['bigRate', bigRate],
  ] as const) {
    if (!(v >= 0 && v <= 1)) throw new RangeError(`${k} must be in [0, 1], got ${v}`);
  }
  if (!Number.isInteger(oversizeBytes) || oversizeBytes < 0)
    throw new RangeError(`oversizeBytes must be a non-negative integer, got ${oversizeBytes}`);
  const missing = new Set(opts.missingMinutes ?? []);
  for (const m of missing) if (!isMinuteId(m)) throw new RangeError(`missing minute must be YYYYMMDDhhmm, got ${JSON.stringify(m)}`);
  let oversizeMinute = opts.oversizeMinute ?? addMinutes(start, Math.floor(Math.max(0, minutes - 1) / 2));
  if (missing.has(oversizeMinute)) oversizeMinute = firstPresent(start, missing);
  const compressor = compression === 'bz2' ? findCompressor(opts.compressor) : null;

  await makeDirs(opts.out);
  const rng = new Rng(opts.seed);
  const pools = createPivotPools(opts.seed);
  const tally = emptyTally();
  const files: ManifestFile[] = [];
  const missingOut: MinuteId[] = [];
  const updates: ManifestUpdate[] = [];
  const expected = new Set<string>();
  const latest = new Map<string, Seen>();
  const history: string[] = [];
  let oversize: ManifestOversize | null = null;
  let bytesUncompressed = 0;
  let malformedCounter = 0;
  let pending: Promise<void> | null = null;

  let i = 0;
  for (; i < MAX_MINUTES && (i < minutes || (targetBytes > 0 && bytesUncompressed < targetBytes)); i++) {
    const minute = addMinutes(start, i);
    if (missing.has(minute)) {
      missingOut.push(minute);
      continue;
    }
    const minuteSec = minuteToMs(minute) / 1000;
    const file = minute + EXTENSIONS[compression];
    const entry: ManifestFile = { minute, file, lines: 0, records: 0, malformed: [], bytesUncompressed: 0, bytesCompressed: 0 };
    const writer = await openBatchWriter(join(opts.out, file), compression, compressor ?? undefined);
    const touched = new Set<string>();
    const fresh: string[] = [];
    const oversizeLine = oversizeBytes > 0 && minute === oversizeMinute ? Math.max(1, Math.ceil(perMinute / 2)) : 0;
    const lmdOf = (): number => minuteSec + rng.int(60);

    try {
      for (let line = 1; line <= perMinute; line++) {
        if (opts.multiStream && line === Math.floor(perMinute / 2) + 1) await writer.nextStream();
        let text: string;
        if (line !== oversizeLine && rng.chance(malformedRate)) {
          // Round-robin over the kinds so even a small feed shows each of them.
          const kind = MALFORMED_KINDS[malformedCounter++ % MALFORMED_KINDS.length]!;
          text = malformedLine(rng, kind, () => generateRecord(rng, { pools, lastModificationDate: lmdOf(), big: false, variants: rates }));
          entry.malformed.push({ line, kind });
        } else {
          let record: FeedRecord | undefined;
          const lmd = lmdOf();
          if (line !== oversizeLine && history.length > 0 && rng.chance(rates.update)) {
            const key = history[history.length - 1 - rng.int(history.length)]!;
            const prev = latest.get(key)!;
            if (!touched.has(key)) {
              record = generateRecord(rng, { pools, lastModificationDate: lmd, bigRate, variants: rates, identity: prev.identity, tally });
              tally.update += 1;
              updates.push({
                id: key,
                minute,
                line,
                lastModificationDate: lmd,
                previous: { minute: prev.minute, line: prev.line, lastModificationDate: prev.lmd },
              });
            }
          }
          if (record === undefined) {
            // Sometimes the same file analysed by another sandbox: several ids share one sha256.
            const reuse = history.length > 0 && rng.chance(0.1) ? latest.get(rng.pick(history))!.identity.sha256 : undefined;
            const big = line === oversizeLine ? false : undefined;
            // Count variants on a scratch tally: a record whose id collides is thrown away.
            const scratch = emptyTally();
            const base = { pools, lastModificationDate: lmd, bigRate, big, variants: rates, tally: scratch };
            record = generateRecord(rng, { ...base, identity: reuse ? { sha256: reuse } : undefined });
            if (expected.has(canonicalId(record.id))) {
              for (const k of VARIANT_NAMES) scratch[k] = 0; // forget the discarded draw
              record = generateRecord(rng, base);
            }
            for (const k of VARIANT_NAMES) tally[k] += scratch[k];
          }
          const id = canonicalId(record.id);
          if (line === oversizeLine) {
            text = padRecord(rng, record, oversizeBytes);
            oversize = { minute, line, id, bytes: Buffer.byteLength(text) };
          } else {
            text = JSON.stringify(record);
          }
          if (!expected.has(id)) fresh.push(id);
          expected.add(id);
          touched.add(id);
          latest.set(id, { identity: identityOf(record), minute, line, lmd });
        }
        const n = Buffer.byteLength(text) + 1;
        entry.bytesUncompressed += n;
        const p = writer.write(text + '\n');
        if (p) await p;
      }
    } catch (e) {
      // Don't leave a compressor child running (it would keep the process alive) or a half file open.
      await writer.abort();
      await pending?.catch(() => undefined);
      throw e;
    }
    entry.lines = perMinute;
    entry.records = perMinute - entry.malformed.length;
    bytesUncompressed += entry.bytesUncompressed;
    files.push(entry);
    // Only ids of finished minutes may be updated: an update must land in a later minute.
    history.push(...fresh);
    if (history.length > HISTORY) history.splice(0, history.length - HISTORY);

    // Let this file's compressor finish while the next minute is generated; keep at most one waiting.
    const closing = writer.close().then((size) => {
      entry.bytesCompressed = size;
    });
    closing.catch(() => undefined); // awaited below or at the next minute; avoid an unhandled rejection meanwhile
    if (pending) await pending;
    pending = closing;
  }
  if (pending) await pending;

  const manifest: FeedManifest = {
    seed: opts.seed,
    start,
    minutes: i,
    perMinute,
    malformedRate,
    bigRate,
    variantRates: { ...rates },
    compression,
    compressor,
    multiStream: Boolean(opts.multiStream),
    files,
    missing: missingOut,
    records: files.reduce((a, f) => a + f.records, 0),
    malformedLines: files.reduce((a, f) => a + f.malformed.length, 0),
    oversize,
    variants: tally,
    updates,
    bytesUncompressed,
    bytesCompressed: files.reduce((a, f) => a + f.bytesCompressed, 0),
    expectedIds: [...expected].sort(),
  };
  await writeFile(join(opts.out, 'manifest.json'), JSON.stringify(manifest, null, 1) + '\n');
  return manifest;
}

function firstPresent(start: MinuteId, missing: Set<MinuteId>): MinuteId {
  let m = start;
  while (missing.has(m)) m = addMinutes(m, 1);
  return m;
}

/**
 * Serializes `record` padded to exactly `bytes` bytes with one huge encoded PowerShell command
 * (what makes real lines exceed 1 MB). Records already larger are returned as they are.
 */
function padRecord(rng: Rng, record: FeedRecord, bytes: number): string {
  const a = record.attributes;
  const existing = a.command_executions;
  const list: unknown[] = Array.isArray(existing) ? existing : existing === undefined ? [] : [existing];
  const prefix = 'powershell.exe -NoProfile -EncodedCommand ';
  list.push(prefix);
  a.command_executions = list;
  const base = Buffer.byteLength(JSON.stringify(record));
  const need = bytes - base;
  if (need <= 0) return JSON.stringify(record);
  // Base64 needs no JSON escaping, so `need` characters add exactly `need` bytes.
  list[list.length - 1] = prefix + encodedPowerShell(rng, Math.ceil(need * 1.05) + 64).slice(0, need);
  return JSON.stringify(record);
}
