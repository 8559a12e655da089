import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'vitest';
import BetterSqlite3 from 'better-sqlite3';
import { runBackfillCommand } from '../../src/cli/index.js';
import { createLogger } from '../../src/log/index.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { chunkKey, createQueues, indexJobId } from '../../src/queue/index.js';
import { encodeChunk } from '../../src/wire/index.js';
import { closeQueues } from '../../src/runner/index.js';
import { IndexWorker } from '../../src/indexing/index.js';
import { openStore } from '../../src/store/index.js';
import { sinkDocOf } from '../../src/wire/index.js';
import { makeDoc } from '../store/sinkConformance.js';
import { runCli } from '../support/cli.js';
import { cleanup, tempDir, testConfig } from '../support/env.js';

const hex = (i: number): string => createHash('sha256').update(String(i)).digest('hex');
const good = (i: number, extra: Record<string, unknown> = {}): string =>
  JSON.stringify({
    type: 'file_behaviour',
    id: `${hex(i)}_Zenbox`,
    attributes: { behash: `b${i}`, last_modification_date: 100 + i, ...extra },
  });
const sha = (s: string | Buffer): string => createHash('sha256').update(s).digest('hex');
const bz2 = (data: Buffer | string): Buffer => spawnSync('bzip2', ['-c'], { input: data, maxBuffer: 1 << 30 }).stdout;

/** Nested `depth` levels: arrays, objects, or process-tree nodes. */
function deep(kind: 'array' | 'object' | 'tree', depth: number): string {
  if (kind === 'array') return `${'['.repeat(depth)}${']'.repeat(depth)}`;
  if (kind === 'object') return `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
  return `[${'{"name":"x","children":['.repeat(depth)}${']}'.repeat(depth)}]`;
}

interface DeadRow {
  line: number;
  code: string;
  raw: string;
  raw_size: number;
  raw_sha256: string;
  raw_truncated: number;
  raw_encoding: string;
}

test('hostile lines each get their own outcome, the batch goes on, and whole-file faults fail only their minute, once', async () => {
  const dir = tempDir();
  const feed = join(dir, 'feed');
  spawnSync('mkdir', ['-p', feed]);
  const maxLineBytes = 12 * 1024 * 1024;
  const prefixBytes = 4096;
  const tenMb = 'x'.repeat(10 * 1024 * 1024);
  const oversize = `{"id":"${hex(90)}_Zenbox","attributes":{"pad":"${'y'.repeat(maxLineBytes)}"}}`;
  const protoLine = `{"__proto__":{"polluted":1},"id":"${hex(7)}_Zenbox","attributes":{"last_modification_date":7,"__proto__":{"polluted":2},"constructor":{"prototype":{"polluted":3}},"extra_map":{"__proto__":{"polluted":4},"prototype":"p"}}}`;
  // line number → expected dead-letter code (null: accepted)
  const lines: [string | Buffer, string | null][] = [
    [good(1), null],
    ['not json at all', 'not_json'],
    ['[1,2,3]', 'not_object'],
    ['"a string"', 'not_object'],
    ['{"attributes":{}}', 'missing_id'],
    [`{"id":"${'z'.repeat(64)}_Zenbox"}`, 'bad_id'],
    [`{"id":"${hex(2).slice(0, 40)}_Zenbox"}`, 'bad_id'],
    [`{"id":42}`, 'bad_id'],
    // wrong types everywhere are repaired leniently (with warnings), never refused
    [
      `{"id":"${hex(3)}_Zenbox","attributes":{"behash":5,"tags":{"a":1},"analysis_date":"x","processes_tree":7,"sigma_analysis_results":"s","ja3_digests":[1,null,"ABC"],"last_modification_date":"103"}}`,
      null,
    ],
    [`{"id":"${hex(4)}_Zenbox","attributes":{"last_modification_date":104,"size":1e400,"big":123456789012345678901234567890}}`, null],
    [good(5, { command_executions: [tenMb] }), null],
    [oversize, 'line_too_long'],
    [`{"id":"${hex(6)}_Zenbox","attributes":{"unknown":${deep('array', 100_000)}}}`, 'too_deep'],
    [`{"id":"${hex(6)}_Zenbox","attributes":{"unknown":${deep('object', 100_000)}}}`, 'too_deep'],
    [`{"id":"${hex(6)}_Zenbox","attributes":{"processes_tree":${deep('tree', 100_000)}}}`, 'too_deep'],
    [deep('array', 100_000), 'too_deep'],
    [protoLine, null],
    [Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]), 'invalid_utf8'],
    [`{"id":"${hex(8)}_Zenbox","attributes":{"last_modification_date":108,"text":"nul\\u0000 and \\ud800 lone"}}`, null],
    [Buffer.from(`{"id":"${hex(9)}_Zenbox","attributes":{"raw_nul":"a\u0000b"}}`), 'not_json'],
    [`${good(10)}\r`, null],
    ['   ', null],
    [good(11), null],
  ];
  const body = Buffer.concat(lines.flatMap(([l]) => [Buffer.isBuffer(l) ? l : Buffer.from(l), Buffer.from('\n')]));
  writeFileSync(join(feed, '202611010000.jsonl.bz2'), bz2(body));
  // whole-file faults, one minute each, then a good minute: the worker must live through them
  writeFileSync(join(feed, '202611010001.jsonl.bz2'), Buffer.from('this is not bzip2 at all\n'));
  writeFileSync(join(feed, '202611010002.jsonl.bz2'), Buffer.alloc(0));
  writeFileSync(join(feed, '202611010003.jsonl.bz2'), bz2('\n\n   \n\r\n'));
  const bomb = bz2(Buffer.alloc(64 * 1024 * 1024, 0x61));
  assert.ok(bomb.length < 1024, `the bomb is tiny (${bomb.length} bytes)`);
  writeFileSync(join(feed, '202611010004.jsonl.bz2'), bomb);
  const whole = bz2(`${good(20)}\n${good(21)}\n`);
  writeFileSync(join(feed, '202611010005.jsonl.bz2'), whole.subarray(0, whole.length - 12));
  writeFileSync(join(feed, '202611010006.jsonl.bz2'), bz2(`${good(30)}\n`));

  const config = await testConfig(dir, {
    feed: { maxLineBytes, dlqPrefixBytes: prefixBytes, maxBatchBytes: 32 * 1024 * 1024, attempts: 5 },
  });
  const protoBefore = Object.getOwnPropertyNames(Object.prototype).length;
  const run = await runBackfillCommand({ source: `dir:${feed}` }, { config, log: createLogger('silent') });
  assert.equal(({} as { polluted?: unknown }).polluted, undefined, 'no prototype pollution');
  assert.equal(Object.getOwnPropertyNames(Object.prototype).length, protoBefore);

  const expectedRejected = lines.filter(([, c]) => c !== null).length;
  const expectedAccepted = lines.filter(([l, c]) => c === null && String(l).trim() !== '').length;
  assert.deepEqual(run.summary.batches, { ok: 2, empty: 2, missing: 0, failed: 3, pending: 0 });
  assert.deepEqual(run.summary.records, { indexed: expectedAccepted + 1, rejected: expectedRejected });
  const failures = Object.fromEntries(run.summary.failures.map((f) => [f.batch, f.reason.split(':')[0]]));
  assert.deepEqual(failures, { '202611010001': 'BATCH_CORRUPT', '202611010004': 'BATCH_TOO_LARGE', '202611010005': 'BATCH_CORRUPT' });

  // permanent file faults are tried once, not retried to exhaustion
  const queues = createQueues(config.redisUrl as string, config);
  try {
    for (const m of ['202611010001', '202611010004', '202611010005']) {
      const job = await queues.feed.getJob(`feed-${m}`);
      assert.equal(job?.attemptsMade, 1, `${m} tried once`);
    }
  } finally {
    await queues.close();
  }

  const db = new BetterSqlite3(join(dir, 'store.db'), { readonly: true });
  try {
    const dead = db
      .prepare(
        "SELECT line, code, raw, raw_size, raw_sha256, raw_truncated, raw_encoding FROM dead_letters WHERE batch = '202611010000' ORDER BY line",
      )
      .all() as DeadRow[];
    const expectedDead = lines.flatMap(([, c], i) => (c ? [[i + 1, c]] : []));
    assert.deepEqual(
      dead.map((d) => [d.line, d.code]),
      expectedDead,
    );
    for (const d of dead) {
      const original = lines[d.line - 1]?.[0] as string | Buffer;
      const bytes = Buffer.isBuffer(original) ? original : Buffer.from(original);
      assert.equal(d.raw_size, bytes.length, `line ${d.line}: true size`);
      assert.equal(d.raw_sha256, sha(bytes), `line ${d.line}: hash of the whole line`);
      const kept = d.raw_encoding === 'base64' ? Buffer.from(d.raw, 'base64') : Buffer.from(d.raw);
      assert.ok(kept.length <= prefixBytes, `line ${d.line}: at most the prefix is kept`);
      assert.equal(d.raw_truncated === 1, bytes.length > prefixBytes, `line ${d.line}: truncation flagged`);
      assert.ok(bytes.subarray(0, kept.length).equals(kept), `line ${d.line}: the kept bytes are the line's first bytes`);
    }
    const ids = (db.prepare('SELECT id FROM behaviours ORDER BY id').all() as { id: string }[]).map((r) => r.id);
    assert.deepEqual(ids, [1, 3, 4, 5, 7, 8, 10, 11, 30].map((i) => `${hex(i)}_Zenbox`).sort());
    const proto = JSON.parse((db.prepare('SELECT doc FROM behaviours WHERE id = ?').get(`${hex(7)}_Zenbox`) as { doc: string }).doc) as {
      attributes: Record<string, unknown>;
    };
    // the keys are kept as data, never applied as prototypes
    assert.deepEqual(Object.getOwnPropertyDescriptor(proto.attributes.extra_map, '__proto__')?.value, { polluted: 4 });
    assert.equal(Object.getPrototypeOf(proto.attributes.extra_map), Object.prototype);
    const text = JSON.parse((db.prepare('SELECT doc FROM behaviours WHERE id = ?').get(`${hex(8)}_Zenbox`) as { doc: string }).doc) as {
      attributes: { text?: string };
    };
    assert.equal(text.attributes.text, 'nul\u0000 and \ud800 lone');
    const big = JSON.parse((db.prepare('SELECT doc FROM behaviours WHERE id = ?').get(`${hex(5)}_Zenbox`) as { doc: string }).doc) as {
      attributes: { command_executions: string[] };
    };
    assert.equal(big.attributes.command_executions[0]?.length, tenMb.length);
    const batches = db.prepare('SELECT batch, status, error FROM batches ORDER BY batch').all() as {
      batch: string;
      status: string;
      error: string;
    }[];
    assert.deepEqual(
      batches.map((b) => [b.batch, b.status]),
      [
        ['202611010000', 'ok'],
        ['202611010001', 'failed'],
        ['202611010002', 'empty'],
        ['202611010003', 'empty'],
        ['202611010004', 'failed'],
        ['202611010005', 'failed'],
        ['202611010006', 'ok'],
      ],
    );
  } finally {
    db.close();
  }
});

test('a flood of large malformed lines fails its batch with DEAD_LETTERS_EXCEEDED instead of growing the store without bound', async () => {
  const dir = tempDir();
  const feed = join(dir, 'feed');
  spawnSync('mkdir', ['-p', feed]);
  const bad = `{${'z'.repeat(1024 * 1024)}`;
  const body = Array.from({ length: 200 }, () => bad).join('\n');
  const file = bz2(body);
  assert.ok(file.length < 64 * 1024, `input is small (${file.length} bytes) for ${body.length} decoded`);
  writeFileSync(join(feed, '202611010000.jsonl.bz2'), file);
  writeFileSync(join(feed, '202611010001.jsonl.bz2'), bz2(`${good(1)}\n`));
  const config = await testConfig(dir, { feed: { dlqPrefixBytes: 16 * 1024, dlqMaxBatchBytes: 1024 * 1024 } });
  const run = await runBackfillCommand({ source: `dir:${feed}` }, { config, log: createLogger('silent') });
  assert.deepEqual(run.summary.batches, { ok: 1, empty: 0, missing: 0, failed: 1, pending: 0 });
  assert.match(run.summary.failures[0]?.reason ?? '', /^DEAD_LETTERS_EXCEEDED/);
  const db = new BetterSqlite3(join(dir, 'store.db'), { readonly: true });
  try {
    const { n, bytes } = db.prepare('SELECT count(*) AS n, sum(length(raw)) AS bytes FROM dead_letters').get() as {
      n: number;
      bytes: number;
    };
    assert.ok(bytes <= 1024 * 1024 + 16 * 1024, `dead letters hold ${bytes} bytes, within the cap`);
    assert.ok(n > 0 && n < 200);
  } finally {
    db.close();
  }
});

test('the CLI prints its summary and exits 1 when a batch fails, and removes the private Redis it started', async () => {
  const dir = tempDir();
  const feed = join(dir, 'feed');
  const tmp = join(dir, 'tmp');
  spawnSync('mkdir', ['-p', feed, tmp]);
  writeFileSync(join(feed, '202611010000.jsonl.bz2'), Buffer.from('garbage'));
  writeFileSync(join(feed, '202611010001.jsonl.bz2'), bz2(`${good(1)}\nnope\n`));
  const env = { TMPDIR: tmp, SANDTRAIL_STORE: `sqlite:${join(dir, 'cli.db')}`, REDIS_URL: '', SANDTRAIL_REDIS_URL: '' };
  for (const json of [true, false]) {
    const r = await runCli(['backfill', '--source', `dir:${feed}`, ...(json ? ['--json'] : [])], { env });
    assert.equal(r.code, 1, r.stderr);
    if (json) {
      const s = JSON.parse(r.stdout) as { batches: Record<string, number>; failures: { batch: string; reason: string }[] };
      assert.deepEqual(s.batches, { ok: 1, empty: 0, missing: 0, failed: 1, pending: 0 });
      assert.equal(s.failures[0]?.batch, '202611010000');
    } else {
      assert.match(r.stdout, /1 ok, 0 empty, 0 missing, 1 failed/);
      assert.match(r.stdout, /failed 202611010000: BATCH_CORRUPT/);
    }
    for (const l of r.stderr.split('\n').filter((x) => x.trim() !== '')) assert.doesNotThrow(() => JSON.parse(l), `log line is JSON: ${l}`);
    assert.deepEqual(
      readdirSync(tmp).filter((n) => n.startsWith('sandtrail-redis-')),
      [],
      'no private Redis directory left behind',
    );
  }
});

test('a forged index chunk in Redis (a decompression bomb, bytes that are not a chunk) is dead-lettered CHUNK_CORRUPT and the worker goes on', async () => {
  const { brotliCompressSync, constants } = await import('node:zlib');
  const dir = tempDir();
  const config = await testConfig(dir);
  const store = openStore(config.store, config);
  cleanup(() => store.close());
  const queues = createQueues(config.redisUrl as string, config);
  const worker = new IndexWorker({ redisUrl: config.redisUrl as string, config, store, queues, log: createLogger('silent') });
  cleanup(async () => {
    await worker.stop();
    await closeQueues(queues, createLogger('silent'));
  });
  const put = async (batch: string, payload: Buffer, rawBytes?: number): Promise<void> => {
    const jobId = indexJobId(batch, 0);
    const payloadKey = chunkKey(config.queuePrefix, jobId);
    await queues.connection.set(payloadKey, payload);
    await queues.index.add(
      'chunk',
      { batch, n: 0, count: 1, payloadKey, bytes: payload.length, ...(rawBytes ? { rawBytes } : {}) },
      { jobId },
    );
  };
  // 1 GiB of zeros claiming to be a 1 KB chunk, then the same without a recorded size (a job of
  // an older version: capped by index.chunkMaxBytes + 2 x feed.maxLineBytes), then a real chunk
  const bomb = brotliCompressSync(Buffer.alloc(1024 * 1024 * 1024), { params: { [constants.BROTLI_PARAM_QUALITY]: 1 } });
  await put('202611010000', bomb, 1024);
  await put('202611010001', bomb);
  await put('202611010002', Buffer.from('not a chunk'), 1024);
  const real = await encodeChunk([sinkDocOf(makeDoc(hex(7), 'Zenbox', 100, { behash: 'b7' }))]);
  await put('202611010003', real.payload, real.rawBytes);
  worker.start();
  const until = Date.now() + 30_000;
  while ((await store.sink.count()) < 1 || ((await queues.index.getJobCounts('failed')).failed ?? 0) < 3) {
    assert.ok(Date.now() < until, 'the worker stored the real chunk and failed the three forged ones');
    await sleep(100);
  }
  const letters = await store.dlq.list({ stage: 'index' });
  assert.deepEqual(letters.map((l) => [l.batch, l.code]).sort(), [
    ['202611010000', 'CHUNK_CORRUPT'],
    ['202611010001', 'CHUNK_CORRUPT'],
    ['202611010002', 'CHUNK_CORRUPT'],
  ]);
  assert.match(letters.find((l) => l.batch === '202611010000')?.message ?? '', /more than the 1024 bytes it was written with/);
  const failed = await queues.index.getFailed();
  assert.ok(
    failed.every((j) => j.attemptsMade === 1),
    'refused at once, not retried',
  );
  assert.ok(process.memoryUsage().rss < 1024 * 1024 * 1024, 'the bombs were not decoded whole');
});
