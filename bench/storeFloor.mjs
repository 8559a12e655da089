// The "store floor" of `npm run bench`: the least a pipeline that stores these files can do on two
// threads, for the ratios of the real one. Per batch file, in order: the bzip2 decoder the pipeline
// spawns (a child per file), lines split on "\n", JSON.parse of each (nothing normalized), and each
// parsed line's own bytes inserted by its id into one SQLite table in a worker thread (WAL, the
// store's page size and page cache, a transaction per ~2,000 lines, at most 32 MiB handed over and
// not yet stored). No queue, no batch log, no pivot rows, no dead letters.
//
//   node bench/storeFloor.mjs DB DECODER [DECODER_ARG...] -- FILE...
//
// Prints one JSON object: {"lines", "parsed", "stored", "bytes", "seconds", "maxRssKb"}; seconds
// run from the first decoder's spawn to the last commit (Node's start-up excluded, as the Python
// loop's own time excludes the interpreter's).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { rmSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';

const HANDOFF_MAX_BYTES = 32 * 1024 * 1024;
const CHUNK_MAX_DOCS = 500;
const CHUNK_MAX_BYTES = 4 * 1024 * 1024;
const CHUNKS_PER_COMMIT = 4;

if (isMainThread) await main();
else storeThread();

async function main() {
  const args = process.argv.slice(2);
  const sep = args.indexOf('--');
  const [db, decoder, ...decoderArgs] = args.slice(0, sep);
  const files = args.slice(sep + 1);
  if (sep < 2 || !db || !decoder || files.length === 0) {
    console.error('usage: node bench/storeFloor.mjs DB DECODER [DECODER_ARG...] -- FILE...');
    process.exit(2);
  }
  for (const suffix of ['', '-wal', '-shm']) rmSync(db + suffix, { force: true });
  const t0 = performance.now();
  const thread = new Worker(new URL(import.meta.url), { workerData: { db } });
  const failed = once(thread, 'error').then(([err]) => {
    throw err;
  });
  let inFlight = 0;
  let room;
  let ended;
  const end = new Promise((resolve) => (ended = resolve));
  thread.on('message', (m) => {
    if (m.type === 'end') ended(m);
    if (m.type !== 'stored') return;
    inFlight -= m.bytes;
    if (room && inFlight < HANDOFF_MAX_BYTES) room();
  });
  let ids = [];
  let docs = [];
  let size = 0;
  const handOver = async () => {
    thread.postMessage(
      { type: 'chunk', ids, docs },
      docs.map((d) => d.buffer),
    );
    inFlight += size;
    ids = [];
    docs = [];
    size = 0;
    if (inFlight >= HANDOFF_MAX_BYTES) await Promise.race([new Promise((resolve) => (room = resolve)), failed]);
    room = undefined;
  };
  let lines = 0;
  let parsed = 0;
  let bytes = 0;
  for (const file of files) {
    const child = spawn(decoder, [...decoderArgs, file], { stdio: ['ignore', 'pipe', 'inherit'] });
    const exited = once(child, 'close');
    // the pieces of a line that spans reads, joined once its end arrives
    let pieces = [];
    for await (const chunk of child.stdout) {
      let start = 0;
      for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, start)) {
        const line = pieces.length === 0 ? chunk.subarray(start, nl) : Buffer.concat([...pieces, chunk.subarray(start, nl)]);
        pieces = [];
        start = nl + 1;
        lines++;
        bytes += line.length + 1;
        let value;
        try {
          value = JSON.parse(line.toString('utf8'));
        } catch {
          continue;
        }
        parsed++;
        const id = value?.id ?? value?.data?.id;
        if (typeof id !== 'string') continue;
        // a copy of its own: the decoder's read buffer is reused, the copy is transferred
        const doc = new Uint8Array(line.length);
        doc.set(line);
        ids.push(id);
        docs.push(doc);
        size += doc.length;
        if (ids.length >= CHUNK_MAX_DOCS || size >= CHUNK_MAX_BYTES) await handOver();
      }
      if (start < chunk.length) pieces.push(chunk.subarray(start));
    }
    const [code] = await exited;
    if (code !== 0) throw new Error(`${decoder} exited ${code} on ${file}`);
  }
  if (ids.length > 0) await handOver();
  thread.postMessage({ type: 'end' });
  const done = await Promise.race([end, failed]);
  const seconds = (performance.now() - t0) / 1000;
  await thread.terminate();
  const out = { lines, parsed, stored: done.stored, bytes, seconds, maxRssKb: process.resourceUsage().maxRSS };
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

function storeThread() {
  // loaded here only: the main thread never needs SQLite
  import('better-sqlite3').then(({ default: Database }) => {
    const db = new Database(workerData.db);
    db.pragma('page_size = 4096');
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma('cache_size = -65536');
    db.exec('CREATE TABLE docs (id TEXT NOT NULL UNIQUE, doc TEXT NOT NULL)');
    const insert = db.prepare('INSERT OR REPLACE INTO docs (id, doc) VALUES (?, CAST(? AS TEXT))');
    const held = [];
    const commit = db.transaction(() => {
      let bytes = 0;
      for (const { ids, docs } of held) {
        for (let i = 0; i < ids.length; i++) {
          insert.run(ids[i], docs[i]);
          bytes += docs[i].length;
        }
      }
      held.length = 0;
      return bytes;
    });
    parentPort.on('message', (m) => {
      if (m.type === 'chunk') {
        held.push(m);
        if (held.length >= CHUNKS_PER_COMMIT) parentPort.postMessage({ type: 'stored', bytes: commit() });
        return;
      }
      if (held.length > 0) commit();
      const stored = db.prepare('SELECT count(*) AS n FROM docs').get().n;
      db.close();
      parentPort.postMessage({ type: 'end', stored });
    });
  });
}
