import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'vitest';
import { replayDeadLetters } from '../../src/dlq/index.js';
import { openStore, type DeadLetterInput } from '../../src/store/index.js';
import { makeDoc } from '../store/sinkConformance.js';
import { runCli, startCli } from '../support/cli.js';
import { tempDir } from '../support/env.js';

const base = { batch: '202611010000', docId: null, path: '$', rawEncoding: 'utf8' as const, rawTruncated: false };

test('replay indexes what now passes, keeps what does not, and never replays a truncated line', async () => {
  const store = openStore(`sqlite:${join(tempDir(), 'r.db')}`);
  try {
    const good = JSON.stringify({ id: `${'c'.repeat(64)}_Zenbox`, attributes: { behash: 'h1', last_modification_date: 9 } });
    const doc = makeDoc('d'.repeat(64), 'CAPE Sandbox', 50, { behash: 'h2' });
    const entries: DeadLetterInput[] = [
      {
        ...base,
        id: 'normalize:202611010000:1',
        stage: 'normalize',
        line: 1,
        code: 'not_json',
        message: 'was bad',
        raw: good,
        rawSize: good.length,
      },
      { ...base, id: 'normalize:202611010000:2', stage: 'normalize', line: 2, code: 'not_json', message: 'bad', raw: '{nope', rawSize: 5 },
      {
        ...base,
        id: 'normalize:202611010000:3',
        stage: 'normalize',
        line: 3,
        code: 'line_too_long',
        message: 'big',
        raw: good,
        rawSize: 5e7,
        rawTruncated: true,
      },
      {
        ...base,
        id: `index:202611010000:${doc.id}`,
        stage: 'index',
        line: null,
        docId: doc.id,
        code: 'SQLITE_FULL',
        message: 'disk full',
        raw: JSON.stringify(doc),
        rawSize: 1,
      },
    ];
    await store.dlq.put(entries);
    await store.dlq.put(entries); // idempotent by id
    assert.equal(await store.dlq.count(), 4);

    const r = await replayDeadLetters(store.dlq, store.sink, { all: true });
    assert.deepEqual(
      {
        replayed: r.replayed,
        stillRejected: r.stillRejected,
        retryable: r.retryable,
        needsSource: r.needsSource,
        batches: r.needsSourceBatches,
      },
      { replayed: 2, stillRejected: 1, retryable: 0, needsSource: 1, batches: ['202611010000'] },
    );
    assert.deepEqual(
      (await store.dlq.list()).map((e) => e.id),
      ['normalize:202611010000:2', 'normalize:202611010000:3'],
    );
    assert.deepEqual(await store.sink.query('behash', 'h1'), [`${'c'.repeat(64)}_Zenbox`]);
    assert.deepEqual(await store.sink.get(doc.id), doc);
    assert.equal((await store.dlq.get('normalize:202611010000:3'))?.code, 'line_too_long');
  } finally {
    await store.close();
  }
});

test('a behaviour stored by a replay is a watch hit like any other: recorded and notified once', async () => {
  const dir = tempDir();
  const file = join(dir, 's.db');
  const store = openStore(`sqlite:${file}`);
  const late = JSON.stringify({ id: `${'e'.repeat(64)}_Zenbox`, attributes: { behash: 'late-h', last_modification_date: 90 } });
  try {
    await store.dlq.put([
      {
        ...base,
        id: 'normalize:202611010000:7',
        stage: 'normalize',
        line: 7,
        code: 'too_deep',
        message: 'deep',
        raw: late,
        rawSize: late.length,
      },
    ]);
  } finally {
    await store.close();
  }
  const hits = join(dir, 'hits.jsonl');
  const cli = (...args: string[]): ReturnType<typeof runCli> => runCli(['--store', `sqlite:${file}`, ...args]);
  assert.equal((await cli('watch', 'add', 'late', '--behash', 'late-h', '--file', hits)).code, 0);
  const replay = await cli('dlq', 'replay', '--all', '--json');
  assert.equal(replay.code, 0, replay.stderr);
  assert.equal((JSON.parse(replay.stdout) as { replayed: number }).replayed, 1);
  const listed = JSON.parse((await cli('watch', 'hits', 'late', '--json')).stdout) as { behaviourId: string }[];
  assert.deepEqual(
    listed.map((h) => h.behaviourId),
    [`${'e'.repeat(64)}_Zenbox`],
  );
  assert.equal(readFileSync(hits, 'utf8').trim().split('\n').length, 1);

  // an id the store does not hold is said, exit 1, as dlq show does
  const unknown = await cli('dlq', 'replay', 'normalize:202611010000:99', '--json');
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /no dead letter with id "normalize:202611010000:99"/);
  assert.deepEqual((JSON.parse(unknown.stdout) as { not_found: string[] }).not_found, ['normalize:202611010000:99']);
});

/** `n` dead letters of lines the normalizer now accepts, one behaviour each. */
function nowPassing(n: number): DeadLetterInput[] {
  return Array.from({ length: n }, (_, i) => {
    const raw = JSON.stringify({
      id: `${i.toString(16).padStart(64, '0')}_Zenbox`,
      attributes: { behash: 'h', last_modification_date: 9 },
    });
    return {
      ...base,
      id: `normalize:202611010000:${i + 1}`,
      stage: 'normalize',
      line: i + 1,
      code: 'not_json',
      message: 'was bad',
      raw,
      rawSize: raw.length,
    };
  });
}

test('a replay stopped by its signal finishes the entry under way, says it was interrupted, and leaves the rest for the next', async () => {
  const store = openStore(`sqlite:${join(tempDir(), 'stop.db')}`);
  try {
    const entries = nowPassing(5);
    await store.dlq.put(entries);
    const stop = new AbortController();
    // the operator's signal arrives while the first document is stored
    const r = await replayDeadLetters(store.dlq, store.sink, { all: true }, { signal: stop.signal, onStored: async () => stop.abort() });
    assert.deepEqual([r.replayed, r.interrupted], [1, true]);
    assert.equal(await store.dlq.count(), 4);
    const rest = await replayDeadLetters(store.dlq, store.sink, { all: true });
    assert.deepEqual([rest.replayed, rest.interrupted], [4, false]);
    assert.equal(await store.sink.count(), 5);
  } finally {
    await store.close();
  }
});

test('dlq replay --all stops on SIGTERM after the entry under way: summary printed, interrupted, exit 130', async () => {
  const file = join(tempDir(), 'sig.db');
  const store = openStore(`sqlite:${file}`);
  const entries = nowPassing(30_000);
  await store.dlq.put(entries);
  await store.close();
  const cli = startCli(['dlq', 'replay', '--all', '--json', '--store', `sqlite:${file}`], {});
  // a store answering at once never left the event loop a turn: the signal waited for the whole replay
  await new Promise((r) => setTimeout(r, 1500));
  cli.child.kill('SIGTERM');
  const r = await cli.exited;
  assert.equal(r.code, 130, r.stderr);
  const out = JSON.parse(r.stdout) as { replayed: number; remaining: number; interrupted: boolean };
  assert.equal(out.interrupted, true);
  assert.ok(out.replayed < 30_000 && out.replayed + out.remaining === 30_000, r.stdout);
});
