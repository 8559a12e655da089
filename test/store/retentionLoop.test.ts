import assert from 'node:assert/strict';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'vitest';
import { createLogger } from '../../src/log/index.js';
import { RetentionLoop, openStore } from '../../src/store/index.js';
import { tempDir } from '../support/env.js';
import { makeDoc, sinkDocs } from './sinkConformance.js';

const DAY = 86_400;

/** A logger whose lines the test reads back. */
function capture(): { lines: Record<string, unknown>[]; log: ReturnType<typeof createLogger> } {
  const lines: Record<string, unknown>[] = [];
  const log = createLogger(
    'info',
    {},
    { destination: { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) } },
  );
  return { lines, log };
}

test('the retention loop removes expired behaviours in bounded steps that follow each other, and stops twice safely', async () => {
  const store = openStore(`sqlite:${join(tempDir(), 'loop.db')}`);
  const now = Math.floor(Date.now() / 1000);
  await store.sink.upsert(sinkDocs(Array.from({ length: 7 }, (_, i) => makeDoc(String(i).repeat(64), 'Zenbox', now - 40 * DAY + i, {}))));
  await store.sink.upsert(sinkDocs(makeDoc('f'.repeat(64), 'Zenbox', now - DAY, {})));
  const { lines, log } = capture();
  // a long interval: only the steps that follow an unfinished one can remove all seven in time
  const loop = new RetentionLoop(store.retention, { days: 30, stepRows: 2, intervalMs: 3_600_000 }, log);
  loop.start();
  for (let i = 0; i < 100 && (await store.sink.count()) > 1; i++) await sleep(20);
  await loop.stop();
  await loop.stop();
  assert.equal(await store.sink.count(), 1);
  const steps = lines.filter((l) => l.msg === 'retention removed expired records');
  assert.deepEqual(
    steps.map((l) => l.behaviours),
    [2, 2, 2, 1],
  );
  assert.deepEqual(
    steps.map((l) => l.done),
    [false, false, false, true],
  );
  await store.close();
});

test('a failed step is logged and tried again at the next interval; retention off starts nothing', async () => {
  const store = openStore(`sqlite:${join(tempDir(), 'loop-fail.db')}`);
  const { lines, log } = capture();
  await store.close();
  // the store is closed underneath: every step fails
  const loop = new RetentionLoop(store.retention, { days: 30, stepRows: 10, intervalMs: 30 }, log);
  loop.start();
  await sleep(250);
  await loop.stop();
  const failures = lines.filter((l) => l.msg === 'retention step failed; tried again later');
  assert.ok(failures.length >= 2, `${failures.length} failed steps logged`);
  assert.match(String(failures[0]?.err), /not open/);

  const quiet = capture();
  const off = new RetentionLoop(store.retention, { days: 'off', stepRows: 10, intervalMs: 10 }, quiet.log);
  assert.equal(off.enabled, false);
  off.start();
  await sleep(60);
  await off.stop();
  assert.deepEqual(quiet.lines, []);
});

test('a loop stopped before its first step takes that step at stop (a short backfill applies retention), but not when forced or already stepped', async () => {
  const now = Math.floor(Date.now() / 1000);
  const fill = async (name: string) => {
    const store = openStore(`sqlite:${join(tempDir(), name)}`);
    await store.sink.upsert(
      sinkDocs([makeDoc('a'.repeat(64), 'Zenbox', now - 40 * DAY, {}), makeDoc('b'.repeat(64), 'Zenbox', now - DAY, {})]),
    );
    return store;
  };
  const settings = { days: 30, stepRows: 100, intervalMs: 3_600_000 } as const;

  const store = await fill('stop-step.db');
  const { lines, log } = capture();
  const loop = new RetentionLoop(store.retention, settings, log);
  // stopped before the first step is due (it waits 50 ms)
  loop.start();
  await loop.stop();
  await loop.stop();
  assert.equal(await store.sink.count(), 1);
  assert.equal(lines.filter((l) => l.msg === 'retention removed expired records').length, 1);
  await store.close();

  // a backlog larger than a step: the stop goes on stepping until none is left
  const big = openStore(`sqlite:${join(tempDir(), 'stop-backlog.db')}`);
  await big.sink.upsert(sinkDocs(Array.from({ length: 7 }, (_, i) => makeDoc(String(i).repeat(64), 'Zenbox', now - 40 * DAY + i, {}))));
  const backlog = capture();
  const stepping = new RetentionLoop(big.retention, { ...settings, stepRows: 2 }, backlog.log);
  stepping.start();
  await stepping.stop();
  assert.equal(await big.sink.count(), 0);
  assert.deepEqual(
    backlog.lines.filter((l) => l.msg === 'retention removed expired records').map((l) => l.behaviours),
    [2, 2, 2, 1],
  );
  await big.close();

  const forcedStore = await fill('stop-forced.db');
  const forced = new RetentionLoop(forcedStore.retention, settings, capture().log);
  forced.start();
  await forced.stop(true);
  assert.equal(await forcedStore.sink.count(), 2);
  await forcedStore.close();
});
