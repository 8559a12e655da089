import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'vitest';
import { SETTINGS_PAGE, withSettingsTable } from '../../scripts/docs-settings.js';
import { envSettings } from '../../src/config/index.js';

const page = (): string => readFileSync(SETTINGS_PAGE, 'utf8');

/** The settings the page's table lists, by dotted path. */
function listed(text: string): string[] {
  return [...text.matchAll(/^\| `([A-Za-z0-9.]+)` \|/gm)].map((m) => m[1] as string);
}

test('docs/settings.md lists every setting of the schema, and nothing else', () => {
  const inSchema = envSettings().map((s) => s.path.join('.'));
  const onPage = listed(page());
  const missing = inSchema.filter((p) => !onPage.includes(p));
  const unknown = onPage.filter((p) => !inSchema.includes(p));
  assert.deepEqual(missing, [], `settings missing from docs/settings.md (run npm run docs:settings): ${missing.join(', ')}`);
  assert.deepEqual(unknown, [], `docs/settings.md lists settings the schema does not have: ${unknown.join(', ')}`);
  assert.equal(new Set(onPage).size, onPage.length, 'each setting once');
});

test("docs/settings.md's table is exactly what npm run docs:settings generates from the schema", () => {
  const text = page();
  assert.ok(
    withSettingsTable(text) === text,
    'docs/settings.md differs from the schema (a default, an environment variable or a description changed): run npm run docs:settings',
  );
});

test('the generated table has each setting with its environment variables, default and description', () => {
  const rows = new Map(
    page()
      .split('\n')
      .filter((l) => l.startsWith('| `'))
      .map((l) => [listed(l)[0], l]),
  );
  for (const s of envSettings()) {
    const row = rows.get(s.path.join('.')) ?? '';
    assert.ok(row.includes(`\`${s.env}\``), `${s.env} in the row of ${s.path.join('.')}`);
    assert.ok(s.description.length > 0, `${s.path.join('.')} has a description in the schema`);
  }
  assert.match(rows.get('redisUrl') ?? '', /`REDIS_URL`/);
  assert.match(rows.get('gti.apiKey') ?? '', /`GTI_APIKEY`/);
  assert.match(rows.get('store') ?? '', /`sqlite:\.\/sandtrail\.db`/);
  assert.match(rows.get('index.chunkMaxDocs') ?? '', /\| `500` \|/);
  assert.match(rows.get('http.port') ?? '', /\| — \|/, 'no default shows as —');
});
