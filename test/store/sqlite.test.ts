import assert from 'node:assert/strict';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { test } from 'vitest';
import { openStore } from '../../src/store/index.js';
import { tempDir } from '../support/env.js';
import { artefactLogConformance } from './artefactLogConformance.js';
import { makePrivateFile, privateFileConformance } from './privateFileConformance.js';
import { sinkConformance } from './sinkConformance.js';

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
