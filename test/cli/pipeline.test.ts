import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'vitest';
import BetterSqlite3 from 'better-sqlite3';
import type { FeedManifest } from '../../src/synth/index.js';
import { runCli } from '../support/cli.js';
import { tempDir, testRedisUrl, uniquePrefix } from '../support/env.js';

const feed = join('sample', 'feed');
const manifest = JSON.parse(readFileSync(join(feed, 'manifest.json'), 'utf8')) as FeedManifest;

test('backfill --json, then query, get and the dead-letter commands on the same store', async () => {
  const dir = tempDir();
  const sink = `sqlite:${join(dir, 'cli.db')}`;
  const env = { REDIS_URL: await testRedisUrl(), SANDTRAIL_QUEUE_PREFIX: uniquePrefix(), SANDTRAIL_STORE: sink };

  const bf = await runCli(['backfill', '--source', `dir:${feed}`, '--json'], { env });
  assert.equal(bf.code, 0, bf.stderr);
  assert.deepEqual(JSON.parse(bf.stdout), {
    batches: { ok: manifest.files.length, empty: 0, missing: manifest.missing.length, failed: 0, pending: 0 },
    records: { indexed: manifest.records, rejected: manifest.malformedLines },
    api_units: 0,
    failures: [],
    requeued: 0,
    interrupted: false,
  });

  // pick a behash shared by several behaviours and check query agrees with the stored documents
  const db = new BetterSqlite3(join(dir, 'cli.db'), { readonly: true });
  const docs = (db.prepare('SELECT doc FROM behaviours').all() as { doc: string }[]).map(
    (r) => JSON.parse(r.doc) as { id: string; sha256: string; pivots: { behash: string | null; ja3: string[] } },
  );
  db.close();
  const byBehash = new Map<string, string[]>();
  for (const d of docs) if (d.pivots.behash) byBehash.set(d.pivots.behash, [...(byBehash.get(d.pivots.behash) ?? []), d.id]);
  const [behash, ids] = [...byBehash.entries()].sort((a, b) => b[1].length - a[1].length)[0]!;
  assert.ok(ids.length > 1);
  const q = await runCli(['query', '--behash', behash.toUpperCase(), '--json'], { env });
  assert.equal(q.code, 0, q.stderr);
  assert.deepEqual(JSON.parse(q.stdout), [...ids].sort());
  // an empty value (an unset shell variable) is a usage error, not "nothing matches"
  const empty = await runCli(['query', '--behash', ''], { env });
  assert.equal(empty.code, 2, empty.stderr);
  assert.match(empty.stderr, /--behash needs a value, got an empty one/);
  const plain = await runCli(['query', '--behash', behash], { env });
  assert.deepEqual(plain.stdout.trim().split('\n'), [...ids].sort());
  const bySha = await runCli(['query', '--sha256', docs[0]!.sha256.toUpperCase(), '--json'], { env });
  assert.ok((JSON.parse(bySha.stdout) as string[]).includes(docs[0]!.id));

  const got = await runCli(['get', ids[0]!, '--json'], { env });
  assert.equal(got.code, 0);
  assert.equal((JSON.parse(got.stdout) as { id: string }).id, ids[0]);
  // an id pasted as the feed spells it (upper-case hex) is the same behaviour
  const [hex, sandbox] = [ids[0]!.slice(0, 64), ids[0]!.slice(65)];
  const upper = await runCli(['get', `${hex.toUpperCase()}_${sandbox}`, '--json'], { env });
  assert.equal(upper.code, 0, upper.stderr);
  assert.equal((JSON.parse(upper.stdout) as { id: string }).id, ids[0]);
  const rel = await runCli(['related', `${hex.toUpperCase()}_${sandbox}`, '--json'], { env });
  assert.equal(rel.code, 0, rel.stderr);
  assert.equal((JSON.parse(rel.stdout) as { id: string }).id, ids[0]);
  const none = await runCli(['get', `${'0'.repeat(64)}_Nowhere`], { env });
  assert.equal(none.code, 1);
  // not found is an answer a script reads on stdout under --json, as every other failure
  for (const args of [
    ['get', `${'0'.repeat(64)}_Nowhere`],
    ['related', `${'0'.repeat(64)}_Nowhere`],
    ['file', '0'.repeat(64)],
    ['dlq', 'show', 'nope'],
  ]) {
    const r = await runCli([...args, '--json'], { env });
    assert.equal(r.code, 1, r.stderr);
    assert.equal((JSON.parse(r.stdout) as { error: { code: string } }).error.code, 'NOT_FOUND', args.join(' '));
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  }

  const list = await runCli(['dlq', 'list', '--json'], { env });
  const listed = JSON.parse(list.stdout) as {
    total: number;
    truncated: boolean;
    entries: { id: string; batch: string; line: number; code: string; rawSize: number }[];
  };
  const entries = listed.entries;
  assert.equal(listed.total, entries.length);
  assert.equal(listed.truncated, false);
  const page = JSON.parse((await runCli(['dlq', 'list', '--json', '--limit', '2', '--offset', '1'], { env })).stdout) as typeof listed;
  assert.deepEqual(
    [page.total, page.truncated, page.entries.map((e) => e.id)],
    [entries.length, true, entries.slice(1, 3).map((e) => e.id)],
  );
  assert.deepEqual(
    entries.map((e) => `${e.batch}:${e.line}`).sort(),
    manifest.files.flatMap((f) => f.malformed.map((m) => `${f.minute}:${m.line}`)).sort(),
  );
  const first = entries[0]!;
  const shown = await runCli(['dlq', 'show', first.id, '--json'], { env });
  const entry = JSON.parse(shown.stdout) as { raw: string; rawSize: number; stage: string };
  assert.equal(entry.stage, 'normalize');
  assert.equal(Buffer.byteLength(entry.raw), entry.rawSize);

  // nothing passes yet: replay keeps every entry
  const replayAll = await runCli(['dlq', 'replay', '--all', '--json'], { env });
  assert.deepEqual(JSON.parse(replayAll.stdout), {
    replayed: 0,
    redelivered: 0,
    still_rejected: entries.length,
    retryable: 0,
    needs_source: 0,
    remaining: entries.length,
    interrupted: false,
    needs_source_batches: [],
    not_found: [],
  });

  // an operator repairs one line (here: in place), and replay indexes it and removes the entry
  const fixedId = `${'ab'.repeat(32)}_Zenbox`;
  const w = new BetterSqlite3(join(dir, 'cli.db'));
  w.prepare('UPDATE dead_letters SET raw = ? WHERE id = ?').run(
    JSON.stringify({ type: 'file_behaviour', id: fixedId, attributes: { behash: 'fixed', last_modification_date: 5 } }),
    first.id,
  );
  w.close();
  const replayOne = await runCli(['dlq', 'replay', first.id, '--json'], { env });
  assert.deepEqual(JSON.parse(replayOne.stdout), {
    replayed: 1,
    redelivered: 0,
    still_rejected: 0,
    retryable: 0,
    needs_source: 0,
    remaining: entries.length - 1,
    interrupted: false,
    needs_source_batches: [],
    not_found: [],
  });
  assert.deepEqual(JSON.parse((await runCli(['query', '--behash', 'FIXED', '--json'], { env })).stdout), [fixedId]);

  const refused = await runCli(['dlq', 'purge', '--json'], { env });
  assert.equal(refused.code, 2, 'without --yes nothing is deleted');
  assert.match(refused.stderr, new RegExp(`would delete ${entries.length - 1} dead letter\\(s\\): pass --yes`));
  // with --json the refusal is on stdout too, as every usage error found after parsing
  assert.deepEqual(JSON.parse(refused.stdout).error.code, 'USAGE');
  assert.equal(JSON.parse(refused.stdout).error.exit, 2);
  const purge = await runCli(['dlq', 'purge', '--yes', '--json'], { env });
  assert.deepEqual(JSON.parse(purge.stdout), { purged: entries.length - 1 });
  assert.deepEqual(JSON.parse((await runCli(['dlq', 'list', '--json'], { env })).stdout).entries, []);
});
