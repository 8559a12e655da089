import assert from 'node:assert/strict';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { test } from 'vitest';
import { openStore, sinkDocOf } from '../../src/store/index.js';
import { tempDir } from '../support/env.js';
import { artefactLogConformance } from './artefactLogConformance.js';
import { huntConformance } from './huntConformance.js';
import { makePrivateFile, privateFileConformance } from './privateFileConformance.js';
import { makeDoc, sinkConformance } from './sinkConformance.js';
import { watchConformance } from './watchConformance.js';

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

watchConformance('sqlite', async () => {
  const store = openStore(`sqlite:${join(dir, `w${n++}.db`)}`);
  return { watches: store.watches, close: () => store.close() };
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
    const indexes = (
      db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'behaviours'").all() as { name: string }[]
    )
      .map((r) => r.name)
      .sort();
    assert.deepEqual(indexes, [
      'behaviours_analysis_date',
      'behaviours_hunt',
      'behaviours_md5',
      'behaviours_sha1',
      'behaviours_sha256',
      'sqlite_autoindex_behaviours_1',
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
