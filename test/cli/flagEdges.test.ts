import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'vitest';
import { openStore } from '../../src/store/index.js';
import { letter } from '../store/bookkeepingConformance.js';
import { makeDoc, sinkDocs } from '../store/sinkConformance.js';
import { runCli } from '../support/cli.js';
import { tempDir } from '../support/env.js';

const NO_REDIS = { REDIS_URL: '', SANDTRAIL_REDIS_URL: '' };
const SHA = 'c'.repeat(64);

test('flags read as every command reads them: --last digits only, an empty pivot value, a hit file under a regular file, ids given twice, conditions in another order', async () => {
  const dir = tempDir();
  const file = join(dir, 's.db');
  const store = openStore(`sqlite:${file}`);
  await store.sink.upsert(sinkDocs(makeDoc(SHA, 'Zenbox', 1_790_000_000, { behash: 'b'.repeat(32) })));
  const raw = JSON.stringify({
    type: 'file_behaviour',
    id: `${'d'.repeat(64)}_Zenbox`,
    attributes: { last_modification_date: 1_790_000_000 },
  });
  await store.dlq.put([letter({ id: 'normalize:202611270000:1', batch: '202611270000', raw, rawSize: raw.length })]);
  await store.close();
  const env = { ...NO_REDIS, SANDTRAIL_STORE: `sqlite:${file}` };

  for (const last of ['1e1', '0x10', '-1', '']) {
    const r = await runCli(['status', '--last', last], { env });
    assert.equal(r.code, 2, `--last ${last}: ${r.stderr}`);
    assert.match(r.stderr, /--last must be a whole number/);
  }
  assert.equal((await runCli(['status', '--last', '3'], { env })).code, 0);
  for (const args of [
    ['run', '--source', 'dir:/nonexistent', '--lag-minutes', '1e1'],
    ['worker', 'scheduler', '--lag-minutes', '0x10'],
  ]) {
    const r = await runCli(args, { env: { ...env, REDIS_URL: 'redis://127.0.0.1:1' } });
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, /--lag-minutes must be a whole number from 0 to 10080/);
  }

  const empty = await runCli(['pivot', '--behash', ' '], { env });
  assert.equal(empty.code, 2, empty.stderr);
  assert.match(empty.stderr, /--behash needs a value, got an empty one/);

  const plain = join(dir, 'plain');
  writeFileSync(plain, 'x');
  const under = await runCli(['watch', 'add', 'w', '--behash', 'b'.repeat(32), '--file', join(plain, 'hits.jsonl')], { env });
  assert.equal(under.code, 2, under.stderr);
  assert.match(under.stderr, /--file .*plain\/hits\.jsonl cannot be a file: ENOTDIR/);

  const twice = await runCli(['dlq', 'replay', 'normalize:202611270000:1', 'normalize:202611270000:1', '--json'], { env });
  assert.equal(twice.code, 0, twice.stderr);
  const out = JSON.parse(twice.stdout) as { replayed: number; not_found: string[] };
  assert.equal(out.replayed, 1);
  assert.deepEqual(out.not_found, []);

  const hits = join(dir, 'hits.jsonl');
  const first = await runCli(['watch', 'add', 'sig', '--sigma-rule', 'Rule_B', '--sigma-rule', 'rule_a', '--file', hits, '--retro'], {
    env,
  });
  assert.equal(first.code, 0, first.stderr);
  const again = await runCli(['watch', 'add', 'sig', '--sigma-rule', 'rule_a', '--sigma-rule', 'Rule_B', '--file', hits, '--retro'], {
    env,
  });
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stderr, /watch sig exists as given: its retro run resumes/);
  assert.ok(!existsSync(join(plain, 'hits.jsonl')));
});

test('--max-api-units takes digits only, whatever the source and with --dry-run: a typo is never read as no limit', async () => {
  const dir = tempDir();
  const feed = join(dir, 'feed');
  const env = { ...NO_REDIS, GTI_APIKEY: 'edge-key-0000' };
  for (const value of ['abc', '0x10', '1e3', '', '-1']) {
    for (const args of [
      ['backfill', '--source', `dir:${feed}`, '--store', `sqlite:${join(dir, 'b.db')}`],
      ['lookup', SHA, '--dry-run'],
      ['fetch', `${SHA}_Zenbox`, '--dry-run'],
    ]) {
      const r = await runCli([...args, '--max-api-units', value], { env });
      assert.equal(r.code, 2, `${args[0]} --max-api-units '${value}': ${r.code} ${r.stderr}`);
      assert.match(r.stderr, /--max-api-units must be a whole number/);
    }
  }
  assert.equal(existsSync(join(dir, 'b.db')), false);
});
