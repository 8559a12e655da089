import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { test } from 'vitest';
import { openStore } from '../../src/store/index.js';
import { sinkDocOf } from '../../src/wire/index.js';
import { tempDir } from '../support/env.js';
import { artefactLogConformance } from './artefactLogConformance.js';
import { huntConformance } from './huntConformance.js';
import { makePrivateFile, privateFileConformance } from './privateFileConformance.js';
import { writePreviousLayout } from './previousLayout.js';
import { retentionConformance } from './retentionConformance.js';
import { makeDoc, sinkConformance } from './sinkConformance.js';
import { watchConformance } from './watchConformance.js';
import { collectionConformance } from './collectionConformance.js';

const dir = tempDir();
let n = 0;

sinkConformance('sqlite', async () => {
  const store = openStore(`sqlite:${join(dir, `s${n++}.db`)}`);
  return { sink: store.sink, close: () => store.close() };
});

privateFileConformance('sqlite', async () => {
  const store = openStore(`sqlite:${join(dir, `p${n++}.db`)}`);
  return { privateFiles: store.privateFiles, close: () => store.close() };
});

artefactLogConformance('sqlite', async () => {
  const store = openStore(`sqlite:${join(dir, `a${n++}.db`)}`);
  return { artefacts: store.artefacts, close: () => store.close() };
});

retentionConformance('sqlite', async ({ retentionDays, now }) => {
  const store = openStore(`sqlite:${join(dir, `r${n++}.db`)}`, { retention: { days: retentionDays }, now });
  return { store, close: () => store.close() };
});

watchConformance('sqlite', async () => {
  const store = openStore(`sqlite:${join(dir, `w${n++}.db`)}`);
  return { watches: store.watches, close: () => store.close() };
});

collectionConformance('sqlite', async () => {
  const file = join(dir, `c${n++}.db`);
  const store = openStore(`sqlite:${file}`);
  return {
    collections: store.collections,
    other: async () => {
      const other = openStore(`sqlite:${file}`, {}, { mustExist: true });
      return { collections: other.collections, close: () => other.close() };
    },
    close: () => store.close(),
  };
});

test('private files live in their own indexed table of the same file, apart from the behaviours', async () => {
  const file = join(dir, `apart${n++}.db`);
  const store = openStore(`sqlite:${file}`);
  try {
    await store.privateFiles.upsert([makePrivateFile('a'.repeat(64), 5, { md5: 'b'.repeat(32), vhash: 'v' })]);
  } finally {
    await store.close();
  }
  const db = new BetterSqlite3(file, { readonly: true });
  try {
    const indexed = (
      db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'private_files'").all() as { name: string }[]
    )
      .map((r) => r.name)
      .sort();
    assert.deepEqual(indexed, [
      'private_files_md5',
      'private_files_sha1',
      'private_files_sha256',
      'private_files_vhash',
      'sqlite_autoindex_private_files_1',
    ]);
    assert.deepEqual(db.prepare('SELECT id, sha256, sha1, md5, vhash, fetched_at FROM private_files').all(), [
      { id: 'a'.repeat(64), sha256: 'a'.repeat(64), sha1: null, md5: 'b'.repeat(32), vhash: 'v', fetched_at: 5 },
    ]);
    assert.equal((db.prepare('SELECT count(*) AS n FROM behaviours').get() as { n: number }).n, 0);
  } finally {
    db.close();
  }
});

huntConformance('sqlite', async () => {
  const store = openStore(`sqlite:${join(dir, `h${n++}.db`)}`);
  return { sink: store.sink, hunt: store.hunt, close: () => store.close() };
});

test('a store created by the previous schema gains the hunting columns at open, filled from its documents', async () => {
  const file = join(dir, `old${n++}.db`);
  const sha = 'ab'.repeat(32);
  const doc = makeDoc(sha, 'Zenbox', 1000, {
    behash: 'B1',
    verdicts: ['MALWARE', 'TROJAN', 'MALWARE'],
    sigma_analysis_results: [{ rule_id: 'Sig-1', rule_level: 'high' }],
  });
  doc.context_attributes = { file_md5: 'CD'.repeat(16), file_sha1: 'not-a-sha1' };
  // the schema and the rows exactly as the code before the hunting reads wrote them
  const old = new BetterSqlite3(file);
  old.exec(`
    CREATE TABLE behaviours (
      id TEXT PRIMARY KEY NOT NULL, sha256 TEXT NOT NULL, sandbox_name TEXT NOT NULL, analysis_date INTEGER,
      last_modification_date INTEGER NOT NULL, doc TEXT NOT NULL, indexed_at INTEGER NOT NULL);
    CREATE INDEX behaviours_sha256 ON behaviours(sha256);
    CREATE TABLE pivots (kind TEXT NOT NULL, value TEXT NOT NULL, id TEXT NOT NULL, PRIMARY KEY (kind, value, id)) WITHOUT ROWID;
    CREATE INDEX pivots_by_id ON pivots(id);`);
  old
    .prepare('INSERT INTO behaviours VALUES (?, ?, ?, ?, ?, ?, ?)')
    .run(doc.id, sha, 'Zenbox', doc.analysis_date, doc.last_modification_date, JSON.stringify(doc), 1);
  old.prepare('INSERT INTO pivots VALUES (?, ?, ?)').run('behash', 'b1', doc.id);
  old.prepare('INSERT INTO pivots VALUES (?, ?, ?)').run('sigma_rule_id', 'sig-1', doc.id);
  old.close();

  for (let open = 0; open < 2; open++) {
    // the second open finds a current store: nothing to migrate
    const store = openStore(`sqlite:${file}`);
    try {
      const s = await store.hunt.pivotStats('behash', 'B1');
      assert.deepEqual(
        [s.behaviours, s.files, s.sandboxes, s.verdicts, s.newest[0]?.verdicts],
        [1, 1, [{ name: 'Zenbox', count: 1 }], [{ name: 'MALWARE', count: 1 }, { name: 'TROJAN', count: 1 }], ['MALWARE', 'TROJAN']],
      ); // prettier-ignore
      const r = await store.hunt.fileRollup('cd'.repeat(16));
      assert.deepEqual(
        [r?.sha256, r?.md5, r?.sha1, r?.sigma],
        [sha, 'cd'.repeat(16), null, [{ value: 'sig-1', sandboxes: ['Zenbox'], level: 'high', title: null }]],
      );
      assert.deepEqual(
        (await store.hunt.top('sigma_rule_id')).map((t) => [t.value, t.behaviours]),
        [['sig-1', 1]],
      );
    } finally {
      await store.close();
    }
  }
  const db = new BetterSqlite3(file, { readonly: true });
  try {
    assert.deepEqual(db.prepare('SELECT verdicts, md5, sha1 FROM behaviours').all(), [
      { verdicts: '["MALWARE","TROJAN"]', md5: 'cd'.repeat(16), sha1: null },
    ]);
    // the pivot rows carry their behaviour's hunting columns
    assert.deepEqual(db.prepare('SELECT kind, value, analysis_date, sandbox_name, verdicts FROM pivots ORDER BY kind').all(), [
      { kind: 'behash', value: 'b1', analysis_date: doc.analysis_date, sandbox_name: 'Zenbox', verdicts: '["MALWARE","TROJAN"]' },
      { kind: 'sigma_rule_id', value: 'sig-1', analysis_date: doc.analysis_date, sandbox_name: 'Zenbox', verdicts: '["MALWARE","TROJAN"]' },
    ]);
    // its tables are kept as the undated partition, behind the views, with their indexes
    const indexes = (
      db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'behaviours_undated'").all() as { name: string }[]
    )
      .map((r) => r.name)
      .sort();
    assert.deepEqual(indexes, [
      'behaviours_by_date',
      'behaviours_by_lmd',
      'behaviours_md5',
      'behaviours_sha1',
      'behaviours_sha256',
      'sqlite_autoindex_behaviours_undated_1',
    ]);
  } finally {
    db.close();
  }
});

test('a frequent value and a rare one page their newest behaviours alike (date walk and sort)', async () => {
  const store = openStore(`sqlite:${join(dir, `plans${n++}.db`)}`);
  try {
    // 90 behaviours, 60 with behash "hot" (frequent enough to be paged by walking the date index),
    // dates with ties and a few without analysis_date
    const docs = Array.from({ length: 90 }, (_, i) => {
      const d = makeDoc(i.toString(16).padStart(64, '0'), i % 3 === 0 ? 'Zenbox' : 'CAPE Sandbox', 5000, {
        behash: i % 3 === 2 ? `rare-${i % 2}` : 'hot',
      });
      d.analysis_date = i % 11 === 0 ? null : 1000 + (i % 7);
      return d;
    });
    await store.sink.upsert(docs.map((d) => sinkDocOf(d)));
    const newestFirst = (value: string): string[] =>
      docs
        .filter((d) => d.pivots.behash === value)
        .sort((a, b) => (b.analysis_date ?? -1) - (a.analysis_date ?? -1) || (a.id < b.id ? -1 : 1))
        .map((d) => d.id);
    for (const value of ['hot', 'rare-0']) {
      const all = newestFirst(value);
      for (const [limit, offset] of [
        [2, 0],
        [3, 7],
        [5, all.length - 2],
        [20, 0],
      ] as const) {
        const s = await store.hunt.pivotStats('behash', value, { limit, offset });
        assert.deepEqual(
          s.newest.map((l) => l.id),
          all.slice(offset, offset + limit),
          `${value} ${limit}@${offset}`,
        );
      }
    }
  } finally {
    await store.close();
  }
});

test("a store of the previous hunting schema gets pivot rows with their behaviours' columns, and loses the indexes it no longer needs", async () => {
  const file = join(dir, `prev${n++}.db`);
  const docs = [0, 1, 2].map((i) => {
    const d = makeDoc(String(i).repeat(64), i === 2 ? 'CAPE Sandbox' : 'Zenbox', 1000 + i, {
      behash: 'B',
      verdicts: i === 0 ? ['MALWARE'] : [],
    });
    d.analysis_date = i === 1 ? null : 500 + i;
    return d;
  });
  // the previous schema: pivot rows without copies, the covering index of the hunting columns
  const old = new BetterSqlite3(file);
  writePreviousLayout(old, docs);
  old.close();
  const store = openStore(`sqlite:${file}`);
  try {
    const s = await store.hunt.pivotStats('behash', 'B');
    assert.deepEqual(
      [s.behaviours, s.files, s.sandboxes, s.verdicts, s.firstSeen, s.lastSeen, s.newest.map((l) => l.id)],
      [3, 3, [{ name: 'Zenbox', count: 2 }, { name: 'CAPE Sandbox', count: 1 }], [{ name: 'MALWARE', count: 1 }], 500, 502, [docs[2]?.id, docs[0]?.id, docs[1]?.id]],
    ); // prettier-ignore
  } finally {
    await store.close();
  }
  const db = new BetterSqlite3(file, { readonly: true });
  try {
    assert.deepEqual(db.prepare('SELECT id, analysis_date, sandbox_name, verdicts FROM pivots ORDER BY id').all(), [
      { id: docs[0]?.id, analysis_date: 500, sandbox_name: 'Zenbox', verdicts: '["MALWARE"]' },
      { id: docs[1]?.id, analysis_date: null, sandbox_name: 'Zenbox', verdicts: '[]' },
      { id: docs[2]?.id, analysis_date: 502, sandbox_name: 'CAPE Sandbox', verdicts: '[]' },
    ]);
    const names = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' ORDER BY name").pluck().all() as string[]).filter((x) =>
      /^(behaviours|pivots)_/.test(x),
    );
    assert.deepEqual(names, [
      'behaviours_by_date',
      'behaviours_by_lmd',
      'behaviours_md5',
      'behaviours_sha1',
      'behaviours_sha256',
      'pivots_groups',
    ]);
  } finally {
    db.close();
  }
});

test('related ranks alike whether a value is frequent enough to be split from the grouping or not', { timeout: 120_000 }, async () => {
  const store = openStore(`sqlite:${join(dir, `split${n++}.db`)}`);
  try {
    // 12,000 behaviours carry behash "hot" (more than the split threshold); some also carry the
    // target's sigma rules or JA3, a few carry those without "hot"; dates with ties and gaps
    const docs = Array.from({ length: 12_100 }, (_, i) => {
      const hot = i < 12_000;
      const sigma = i % 97 === 0 ? ['s1', 's2'] : i % 89 === 0 ? ['s1'] : [];
      const d = makeDoc(i.toString(16).padStart(64, '0'), i % 2 ? 'Zenbox' : 'CAPE Sandbox', 5000, {
        behash: hot ? 'hot' : `cold-${i}`,
        sigma_analysis_results: sigma.map((rule_id) => ({ rule_id })),
        tls: i % 211 === 0 ? [{ ja3: 'a'.repeat(32) }] : [],
      });
      d.analysis_date = i % 13 === 0 ? null : 1000 + (i % 50);
      return d;
    });
    for (let i = 0; i < docs.length; i += 2000) await store.sink.upsert(docs.slice(i, i + 2000).map((d) => sinkDocOf(d)));
    const valuesOf = (d: (typeof docs)[number]): Set<string> =>
      new Set([`behash:${d.pivots.behash}`, ...d.pivots.sigma_rule_ids.map((v) => `sigma:${v}`), ...d.pivots.ja3.map((v) => `ja3:${v}`)]);
    const rankBrute = (target: (typeof docs)[number], limit: number): [string, number][] => {
      const mine = valuesOf(target);
      return docs
        .filter((d) => d.id !== target.id)
        .map((d) => ({ d, shared: [...valuesOf(d)].filter((v) => mine.has(v)).length }))
        .filter((x) => x.shared > 0)
        .sort(
          (a, b) =>
            b.shared - a.shared || (b.d.analysis_date ?? -Infinity) - (a.d.analysis_date ?? -Infinity) || (a.d.id < b.d.id ? -1 : 1),
        )
        .slice(0, limit)
        .map((x) => [x.d.id, x.shared]);
    };
    // the hot value with two rare ones; with one rare one; alone; and a behaviour without the hot value
    for (const i of [0, 89 * 3, 211 * 4, 1, 97 * 124]) {
      const target = docs[i] as (typeof docs)[number];
      for (const limit of [5, 20, 300]) {
        const r = await store.hunt.related(target.id, { limit });
        assert.deepEqual(
          r?.related.map((l) => [l.id, l.shared.length]),
          rankBrute(target, limit),
          `${target.id.slice(60)} limit ${limit}`,
        );
      }
    }
  } finally {
    await store.close();
  }
});

test('a store connection writes with a 64 MiB page cache and checkpoints every 256 MiB of WAL, cut back to 64 MiB', async () => {
  const file = join(dir, `pragmas${n++}.db`);
  const store = openStore(`sqlite:${file}`);
  await store.close();
  // the settings are per connection: read them through a connection opened the same way
  const again = openStore(`sqlite:${file}`);
  try {
    const db = (again.sink as unknown as { db: BetterSqlite3.Database }).db;
    const read = (p: string): unknown => db.pragma(p, { simple: true });
    assert.deepEqual(
      [read('page_size'), read('cache_size'), read('wal_autocheckpoint'), read('journal_size_limit'), read('journal_mode')],
      [4096, -65536, 65536, 64 * 1024 * 1024, 'wal'],
    );
  } finally {
    await again.close();
  }
});

test('a store written before retention gains its time indexes at open, then prunes by the behaviour’s own date', async () => {
  const file = join(dir, `before-retention${n++}.db`);
  const docs = [makeDoc('a'.repeat(64), 'Zenbox', 1000, { behash: 'b1' }), makeDoc('b'.repeat(64), 'Zenbox', 900_000, { behash: 'b1' })];
  const old = new BetterSqlite3(file);
  writePreviousLayout(old, docs);
  old.close();
  const timeIndexes = (): string[] => {
    const db = new BetterSqlite3(file, { readonly: true });
    try {
      return db
        .prepare(
          "SELECT name FROM sqlite_master WHERE name IN ('behaviours_by_lmd', 'dead_letters_created', 'watch_hits_at', 'artefacts_fetched')",
        )
        .pluck()
        .all() as string[];
    } finally {
      db.close();
    }
  };
  assert.deepEqual(timeIndexes(), []);
  const store = openStore(`sqlite:${file}`);
  try {
    assert.deepEqual(timeIndexes().sort(), ['artefacts_fetched', 'behaviours_by_lmd', 'dead_letters_created', 'watch_hits_at']);
    assert.equal((await store.retention.prune({ behavioursBefore: 500_000, dryRun: true })).behaviours, 1);
    const r = await store.retention.prune({ behavioursBefore: 500_000 });
    assert.deepEqual([r.behaviours, r.done], [1, true]);
    assert.deepEqual(await store.sink.query('behash', 'B1'), [docs[1]?.id]);
    assert.equal(await store.sink.count(), 1);
  } finally {
    await store.close();
  }
});

test('a read leaves no -wal or -shm beside a store nobody else has open, and never removes those a writer uses', async () => {
  const file = join(dir, `side${n++}.db`);
  const sides = (): string[] => ['-wal', '-shm'].filter((x) => existsSync(`${file}${x}`));
  const writer = openStore(`sqlite:${file}`);
  await writer.sink.upsert([sinkDocOf(makeDoc('1'.repeat(64), 'Zenbox', 1_764_000_000, {}))]);
  await writer.close();
  assert.deepEqual(sides(), [], 'the writer removed its own at close');

  const read = async (): Promise<number> => {
    const reader = openStore(`sqlite:${file}`, {}, { readOnly: true });
    try {
      return (await reader.sink.query('sha256', '1'.repeat(64))).length + (await reader.sink.query('sha256', '2'.repeat(64))).length;
    } finally {
      await reader.close();
    }
  };
  assert.equal(await read(), 1);
  assert.deepEqual(sides(), [], 'SQLite made them for the read; the read removed them');

  // a writer has the store open: its files stay, and what it writes next is read
  const open = openStore(`sqlite:${file}`);
  try {
    await open.sink.upsert([sinkDocOf(makeDoc('2'.repeat(64), 'Zenbox', 1_764_000_000, {}))]);
    assert.equal(await read(), 2);
    assert.deepEqual(sides(), ['-wal', '-shm']);
    await open.sink.upsert([sinkDocOf(makeDoc('2'.repeat(64), 'VirusTotal Jujubox', 1_764_000_000, {}))]);
    assert.equal((await open.sink.query('sha256', '2'.repeat(64))).length, 2);
  } finally {
    await open.close();
  }
  assert.deepEqual(sides(), []);
  assert.equal(await read(), 3);
});

test("a second open of a store in the same process keeps the first connection's locks, so another process's reader leaves its write-ahead log alone", async () => {
  const file = join(tempDir(), 'locks.db');
  const writer = openStore(`sqlite:${file}`);
  try {
    await writer.sink.upsert([sinkDocOf(makeDoc('a'.repeat(64), 'Zenbox', 1000, {}))]);
    const inode = `:${statSync(file).ino}`;
    // POSIX record locks of this process on the store file itself
    const held = (): boolean =>
      readFileSync('/proc/locks', 'utf8')
        .split('\n')
        .some((l) => {
          const f = l.trim().split(/\s+/);
          return f[4] === String(process.pid) && (f[5] ?? '').endsWith(inode);
        });
    assert.ok(held(), 'the writer holds a lock on the file');
    // what the index thread, a read or a retention step does beside a writer: another open of the same file
    await openStore(`sqlite:${file}`, {}, { readOnly: true }).close();
    await openStore(`sqlite:${file}`).close();
    assert.ok(held(), "the writer's lock survives the other opens");
    // a reader in another process (sqlite3, Datasette) then sees a connection left, and keeps the -wal
    const reader = spawnSync(process.execPath, [
      '-e',
      `const D = require('better-sqlite3'); const db = new D(${JSON.stringify(file)}); db.prepare('SELECT count(*) FROM behaviours').get(); db.close();`,
    ]);
    assert.equal(reader.status, 0, String(reader.stderr));
    assert.ok(existsSync(`${file}-wal`), 'the -wal the writer appends to is still there');
    await writer.sink.upsert([sinkDocOf(makeDoc('b'.repeat(64), 'Zenbox', 2000, {}))]);
  } finally {
    await writer.close();
  }
  const after = openStore(`sqlite:${file}`, {}, { readOnly: true });
  try {
    assert.equal(await after.sink.count(), 2, 'both writes are in the store');
  } finally {
    await after.close();
  }
});
