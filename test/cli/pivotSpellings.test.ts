import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { createLogger } from '../../src/log/index.js';
import { startReadApi } from '../../src/serve/index.js';
import { openStore } from '../../src/store/index.js';
import { runCli } from '../support/cli.js';
import { cleanup, tempDir } from '../support/env.js';
import { makeDoc, sinkDocs } from '../store/sinkConformance.js';

const SHA = (c: string): string => c.repeat(64);
const DROP = 'd'.repeat(64);
const RULE = 'sig-loader';

/** A store where one sigma rule and one dropped file are each carried by two of three behaviours. */
async function filledStore(): Promise<string> {
  const file = join(tempDir(), 'store.db');
  const store = openStore(`sqlite:${file}`);
  try {
    await store.sink.upsert(
      sinkDocs([
        makeDoc(SHA('a'), 'Zenbox', 1000, {
          sigma_analysis_results: [{ rule_id: RULE }],
          files_dropped: [{ path: 'a.exe', sha256: DROP }],
        }),
        makeDoc(SHA('b'), 'CAPE Sandbox', 2000, { sigma_analysis_results: [{ rule_id: RULE }] }),
        makeDoc(SHA('c'), 'Zenbox', 3000, { files_dropped: [{ path: 'c.exe', sha256: DROP }] }),
      ]),
    );
  } finally {
    await store.close();
  }
  return file;
}

test('the read API takes pivot kinds in both spellings: sigma_rule_id / sigma-rule, dropped_sha256 / dropped-sha256', async () => {
  const file = await filledStore();
  const config = loadConfig({ flags: { store: `sqlite:${file}`, serve: { port: 0 }, logLevel: 'silent' } });
  const store = openStore(config.store, config);
  cleanup(() => store.close());
  const api = await startReadApi({ config, store, log: createLogger('silent') });
  cleanup(() => api.close());
  const get = async (path: string): Promise<{ status: number; body: Record<string, unknown> }> => {
    const r = await fetch(`${api.url}/api/v3/sandtrail/${path}`);
    return { status: r.status, body: (await r.json()) as Record<string, unknown> };
  };
  for (const [stored, flag, value] of [
    ['sigma_rule_id', 'sigma-rule', RULE],
    ['dropped_sha256', 'dropped-sha256', DROP],
  ] as const) {
    const a = await get(`pivots/${stored}/${value}`);
    const b = await get(`pivots/${flag}/${value}`);
    assert.equal(a.status, 200, stored);
    assert.equal(b.status, 200, flag);
    assert.deepEqual(b.body, a.body, `pivots/${flag} answers as pivots/${stored}`);
    assert.equal((a.body.data as { attributes: { behaviours: number } }).attributes.behaviours, 2);
    assert.equal((a.body.data as { id: string }).id, `${stored}:${value}`, 'ids keep the stored spelling');

    const topA = await get(`top/${stored}`);
    const topB = await get(`top/${flag}`);
    assert.equal(topB.status, 200, `top/${flag}`);
    assert.deepEqual(topB.body, topA.body);
    assert.equal((topA.body.data as unknown[]).length, 1);
  }
  const bad = await get('top/sigma');
  assert.equal(bad.status, 400);
  assert.match(JSON.stringify(bad.body), /sigma_rule_id \(or sigma-rule\)/);
});

test('the command line takes pivot kinds and flags in both spellings (top, query, pivot, watch add)', async () => {
  const file = await filledStore();
  const cli = (...args: string[]) => runCli(['--store', `sqlite:${file}`, ...args]);
  const same = async (a: string[], b: string[]): Promise<string> => {
    const [ra, rb] = await Promise.all([cli(...a), cli(...b)]);
    assert.equal(ra.code, 0, `${a.join(' ')}: ${ra.stderr}`);
    assert.equal(rb.code, 0, `${b.join(' ')}: ${rb.stderr}`);
    assert.equal(rb.stdout, ra.stdout, `${b.join(' ')} prints what ${a.join(' ')} prints`);
    return ra.stdout;
  };
  const top = await same(['top', 'sigma-rule', '--json'], ['top', 'sigma_rule_id', '--json']);
  assert.equal((JSON.parse(top) as { value: string }[])[0]?.value, RULE);
  await same(['top', 'dropped-sha256', '--json'], ['top', 'dropped_sha256', '--json']);
  const ids = await same(['query', '--sigma-rule', RULE, '--json'], ['query', '--sigma_rule_id', RULE, '--json']);
  assert.deepEqual(JSON.parse(ids), [`${SHA('a')}_Zenbox`, `${SHA('b')}_CAPE Sandbox`]);
  await same(['query', '--dropped-sha256', DROP, '--json'], ['query', '--dropped_sha256', DROP, '--json']);
  await same(['pivot', '--dropped-sha256', DROP, '--json'], ['pivot', '--dropped_sha256', DROP, '--json']);
  // past the end, the text says how many there are; --limit 0 gives the figures alone
  const past = await cli('pivot', '--sigma-rule', RULE, '--offset', '5');
  assert.match(past.stdout, /^no behaviours past --offset 5 \(2 in all\)$/m);
  const figures = await cli('pivot', '--sigma-rule', RULE, '--limit', '0');
  assert.doesNotMatch(figures.stdout, /no behaviours|newest|--offset/);
  // a top or a ranking of nothing is a usage error, not an empty answer
  for (const args of [
    ['top', 'behash', '--limit', '0'],
    ['related', `${SHA('a')}_Zenbox`, '--limit', '0'],
    ['top', 'behash', '--limit', '1e2'],
    ['dlq', 'list', '--limit', '0'],
    ['watch', 'hits', 'any', '--limit', '0'],
  ]) {
    const r = await cli(...args);
    assert.equal(r.code, 2, args.join(' '));
    // the same words on every command
    assert.match(r.stderr, /--limit must be a whole number from 1 to \d+, got "/, args.join(' '));
  }
  // a search with no match prints no id, and says so on stderr
  const none = await cli('query', '--sigma-rule', 'no-such-rule');
  assert.deepEqual([none.code, none.stdout], [0, '']);
  assert.match(none.stderr, /^sandtrail: nothing matches --sigma-rule no-such-rule in sqlite:/);
  assert.equal((await cli('query', '--sigma-rule', 'no-such-rule', '--json')).stdout, '[]\n');
  const offset = await cli('dlq', 'list', '--offset', '-1');
  assert.match(offset.stderr, /--offset must be a whole number from 0 to 1000000000, got "-1"/);

  const add = await cli('watch', 'add', 'both', '--sigma_rule_id', RULE, '--sigma-rule', 'other', '--dropped_sha256', DROP, '--json');
  assert.equal(add.code, 0, add.stderr);
  const watch = (JSON.parse(add.stdout) as { watch: { conditions: { kind: string; value: string }[] } }).watch;
  assert.deepEqual(
    watch.conditions.map((c) => `${c.kind}=${c.value}`).sort(),
    [`dropped_sha256=${DROP}`, `sigma_rule_id=${RULE}`, 'sigma_rule_id=other'].sort(),
    'the twin flag and the flag both add conditions',
  );

  const badKind = await cli('top', 'sigma');
  assert.equal(badKind.code, 2);
  assert.match(badKind.stderr, /KIND must be one of/);
});
