/** The store `npm run bench:hunt` reads: built once from synthetic records through the real SQLite sink. */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { normalizeRecord } from '../src/normalize/index.js';
import { openSqliteStore } from '../src/store/index.js';
import { sinkDocOf, type SinkDoc } from '../src/wire/index.js';
import { Rng, createPivotPools, generateRecord, vocab, type FeedRecord } from '../src/synth/index.js';
import { BenchFailure } from './failure.js';
import { sqliteFileBytes } from './util.js';

/** Bumped whenever the records below change, so an older store is rebuilt instead of reused. */
const FORMAT = 1;
const CHUNK = 500;
/** Analysis dates spread over 30 days before this instant (2026-12-01T00:00:00Z). */
export const HUNT_END = 1_796_083_200;
const SPAN = 30 * 86_400;

/** The store a run reads, and how it was built. */
export interface HuntStoreInfo {
  file: string;
  behaviours: number;
  files: number;
  reused: boolean;
  /** Seconds to open a reused store: opening migrates a store built by an earlier layout (once). */
  openSeconds: number | null;
  /**
   * Build figures of the run that built the store (from its manifest when reused): wall time of
   * the whole build (generation and normalization included) and of the sink's upserts alone.
   */
  build: { seconds: number; perSecond: number; sinkSeconds: number; sinkPerSecond: number; jsonMB: number; dbMB: number };
}

interface Manifest {
  format: number;
  behaviours: number;
  seed: number | string;
  files: number;
  build: HuntStoreInfo['build'];
}

// What a hunting read touches, and the lists that give a report its character; everything else
// (process trees, registry, file and module lists, IDS alerts) is dropped to keep records small.
const KEEP = new Set([
  'analysis_date', 'last_modification_date', 'sandbox_name', 'behash', 'verdicts', 'verdict_confidence', 'tags',
  'sigma_analysis_results', 'mitre_attack_techniques', 'dns_lookups', 'http_conversations', 'ip_traffic', 'tls',
  'ja3_digests', 'files_dropped', 'has_html_report', 'has_pcap',
]); // prettier-ignore

function pickFields(list: unknown, fields: readonly string[]): unknown {
  return Array.isArray(list)
    ? list.map((x) =>
        x && typeof x === 'object'
          ? Object.fromEntries(fields.filter((f) => f in x).map((f) => [f, (x as Record<string, unknown>)[f]]))
          : x,
      )
    : list;
}

/** A generator record cut down to the hunting fields (a few hundred bytes to ~2 KB). */
function slim(r: FeedRecord, sha: string, fileType: unknown): FeedRecord {
  const a: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(r.attributes)) if (KEEP.has(k)) a[k] = v;
  a.sigma_analysis_results = pickFields(a.sigma_analysis_results, ['rule_id', 'rule_level', 'rule_title', 'rule_source']);
  a.http_conversations = pickFields(a.http_conversations, ['url', 'request_method']);
  a.tls = pickFields(a.tls, ['ja3', 'ja3s', 'sni', 'version']);
  for (const k of Object.keys(a)) if (a[k] === undefined) delete a[k];
  // one MD5 and SHA-1 per file, whichever sandbox reports it (the generator draws them per record)
  const context = {
    file_md5: createHash('md5').update(sha).digest('hex'),
    file_sha1: createHash('sha1').update(sha).digest('hex'),
    file_type_tag: fileType,
  };
  return { type: r.type, id: r.id, links: r.links, attributes: a, context_attributes: context };
}

function readManifest(path: string): Manifest | undefined {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as Manifest;
  } catch {
    return undefined;
  }
}

/**
 * The benchmark store under `dir`: reused when its manifest matches (format, size, seed) and it
 * holds that many behaviours, else built again from scratch.
 */
export async function prepareHuntStore(
  dir: string,
  o: { behaviours: number; seed: number | string },
  say: (msg: string) => void,
): Promise<HuntStoreInfo> {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'hunt.db');
  const manifestPath = join(dir, 'hunt-manifest.json');
  const m = readManifest(manifestPath);
  if (m && m.format === FORMAT && m.behaviours === o.behaviours && m.seed === o.seed && existsSync(file)) {
    const opened = performance.now();
    const store = openSqliteStore(file);
    const openSeconds = round((performance.now() - opened) / 1000, 2);
    if (openSeconds >= 1) say(`store opened in ${openSeconds} s (its layout was migrated)`);
    const count = await store.sink.count();
    await store.close();
    if (count === o.behaviours) {
      say(`reusing ${file} (${count} behaviours, its manifest matches)`);
      return { file, behaviours: count, files: m.files, reused: true, openSeconds, build: m.build };
    }
  }
  for (const f of [file, `${file}-wal`, `${file}-shm`, manifestPath]) rmSync(f, { force: true });
  say(`building ${file}: ${o.behaviours} behaviours through SqliteSink, chunks of ${CHUNK}...`);
  const store = openSqliteStore(file);
  let written = 0;
  let files = 0;
  let bytes = 0;
  const t0 = performance.now();
  let sinkMs = 0;
  try {
    for (const chunk of huntChunks({ seed: o.seed, count: o.behaviours }, CHUNK)) {
      files += chunk.files;
      bytes += chunk.bytes;
      const t = performance.now();
      const res = await store.sink.upsert(chunk.docs);
      sinkMs += performance.now() - t;
      const bad = res.find((r) => r.status !== 'ok');
      if (bad) throw new BenchFailure(`the sink refused ${bad.id}: ${JSON.stringify(bad)}`);
      written += chunk.docs.length;
      if (written % 100_000 === 0) say(`  ${written} behaviours, ${((performance.now() - t0) / 1000).toFixed(0)} s`);
    }
  } finally {
    await store.close();
  }
  const seconds = (performance.now() - t0) / 1000;
  const dbBytes = sqliteFileBytes(file);
  const build = {
    seconds: round(seconds, 1),
    perSecond: Math.round(written / seconds),
    sinkSeconds: round(sinkMs / 1000, 1),
    sinkPerSecond: Math.round(written / (sinkMs / 1000)),
    jsonMB: round(bytes / 1e6, 1),
    dbMB: round(dbBytes / 1e6, 1),
  };
  writeFileSync(
    manifestPath,
    `${JSON.stringify({ format: FORMAT, behaviours: written, seed: o.seed, files, build } satisfies Manifest, null, 2)}\n`,
  );
  return { file, behaviours: written, files, reused: false, openSeconds: null, build };
}

/**
 * The documents of a hunting store of `count` behaviours (analysis dates spread over the 30 days
 * before HUNT_END) in chunks of `size`, each with the files it starts and its JSON bytes.
 */
export function* huntChunks(
  o: { seed: number | string; count: number },
  size: number,
): Generator<{ docs: SinkDoc[]; files: number; bytes: number }> {
  let docs: SinkDoc[] = [];
  let files = 0;
  let bytes = 0;
  for (const { doc, firstOfFile } of huntDocs({ ...o, dateOf: (i) => HUNT_END - SPAN + Math.floor((i * SPAN) / o.count) })) {
    if (firstOfFile) files++;
    bytes += Buffer.byteLength(doc.json);
    docs.push(doc);
    if (docs.length === size) {
      yield { docs, files, bytes };
      [docs, files, bytes] = [[], 0, 0];
    }
  }
  if (docs.length > 0) yield { docs, files, bytes };
}

/**
 * The benchmark stores' documents, in order: files of 1 to 4 sandbox reports (most seen by one),
 * each report a generator record cut down to the hunting fields (or whole with `full`), the i-th analysed at
 * `dateOf(i)` plus up to ten minutes and modified five minutes later.
 */
export function* huntDocs(o: {
  seed: number | string;
  count: number;
  dateOf: (i: number) => number;
  /** Whole generator records (~14 KB of JSON, as feed reports are) instead of their hunting fields. */
  full?: boolean;
}): Generator<{ doc: SinkDoc; firstOfFile: boolean }> {
  const rng = new Rng(`hunt:${String(o.seed)}`);
  const pools = createPivotPools(o.seed);
  let i = 0;
  while (i < o.count) {
    const sha = rng.hex(64);
    const fileType = rng.pick(vocab.fileTypeTags);
    const boxes = new Set<string>();
    for (let k = 1 + rng.skewedInt(0, 3); k > 0; k--) boxes.add(rng.pick(vocab.sandboxes));
    let firstOfFile = true;
    for (const box of boxes) {
      if (i >= o.count) break;
      const analysisDate = o.dateOf(i) + rng.int(600);
      const record = generateRecord(rng, {
        pools,
        big: false,
        lastModificationDate: analysisDate + 300,
        identity: { sha256: sha, sandboxName: box, sandboxId: box, analysisDate },
      });
      const n = normalizeRecord(o.full ? record : slim(record, sha, fileType));
      if (!n.ok) throw new BenchFailure(`a generated record was rejected: ${JSON.stringify(n.rejection)}`);
      yield { doc: sinkDocOf(n.doc), firstOfFile };
      firstOfFile = false;
      i++;
    }
  }
}

/** `x` rounded to `digits` decimals. */
export function round(x: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}
