/**
 * `sandtrail export` as a hunter runs it, on a SQLite store of synthetic reports and hostile
 * ones, every file checked by the ecosystem's own tools (test/share/check_exports.py): the STIX
 * validator at its strictest, stix2-patterns, stix2's own deterministic ids, pymisp.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { normalizeRecord, type BehaviourDoc } from '../../src/normalize/index.js';
import { openStore } from '../../src/store/index.js';
import { Rng, generateRecord } from '../../src/synth/index.js';
import { runCli } from '../support/cli.js';
import { runPythonJson, testPython } from '../support/python.js';
import { smallFilesystem } from '../support/smallFilesystem.js';
import { openRealStore, realCluster } from '../support/realElasticsearch.js';
import { sinkDocs } from '../store/sinkConformance.js';

const py = testPython();
const skip = 'skip' in py ? py.skip : undefined;
const CHECK = 'test/share/check_exports.py';
const es = await realCluster();
const esSkip = skip ?? ('skip' in es ? es.skip : undefined);

const HOSTILE_SHA = 'ab'.repeat(32);
const HOSTILE_RULE = `sig'"]\u0007\u202e`;
const LONG = `m'"]\\${'x'.repeat(100_000)}`;
const HOSTILE_URL = `http://evil.example/a'b"c]d?q=\u202e`;

interface StixReport {
  objects: number;
  types: Record<string, number>;
  patterns: number;
  ids_checked: number;
  duplicate_ids: number;
  problems: string[];
}
interface MispReport {
  attributes: number;
  objects: number;
  object_attributes: number;
  names: Record<string, number>;
  to_ids: number;
  problems: string[];
}

/** Realistic synthetic reports (their pivot values shared, as the feed's are) and one hostile report. */
function corpus(): BehaviourDoc[] {
  const rng = new Rng('export-test');
  const docs: BehaviourDoc[] = [];
  for (let i = 0; i < 150; i++) {
    const n = normalizeRecord(generateRecord(rng, { big: false, lastModificationDate: 1_793_491_200 + i * 600 }));
    if (n.ok) docs.push(n.doc);
  }
  const r = generateRecord(new Rng('hostile'), {
    big: false,
    identity: { sha256: HOSTILE_SHA, sandboxName: 'Zenbox', sandboxId: 'Zenbox' },
  });
  const a = r.attributes;
  a.verdicts = ['MALWARE'];
  a.behash = `b'"]\u0001${'q'.repeat(3000)}`;
  a.mutexes_created = [`Global\\'quote"]`, '\u0000ctl\u001b[31m', LONG];
  a.registry_keys_set = [{ key: `HKLM\\Software\\'];--\u0000`, value: 'v' }];
  a.http_conversations = [{ url: HOSTILE_URL, request_method: 'GET' }];
  a.dns_lookups = [
    { hostname: 'evil.example', resolved_ips: ['198.51.100.7', '2001:db8::7'] },
    { hostname: "bad'host]", resolved_ips: ['203.0.113.9'] },
  ];
  a.sigma_analysis_results = [{ rule_id: HOSTILE_RULE, rule_title: 't'.repeat(100_000), rule_level: 'high' }];
  a.command_executions = [`cmd /c "echo ']"\u0001`];
  a.files_dropped = [{ path: `C:\\evil'].exe`, sha256: 'cd'.repeat(32) }];
  a.mitre_attack_techniques = [{ id: 'T1055.012', severity: 'HIGH' }, { id: "T1'] OR 1=1" }];
  const n = normalizeRecord(r);
  assert.ok(n.ok);
  docs.push(n.doc);
  return docs;
}

describe.skipIf(skip)(`export: STIX 2.1 and MISP checked by their own tools${skip ? ` [skipped: ${skip}]` : ''}`, () => {
  const dir = mkdtempSync(join(tmpdir(), 'sandtrail-export-'));
  const db = join(dir, 'store.db');
  const spec = `sqlite:${db}`;
  const picks: Record<string, string> = {};
  let total = 0;

  beforeAll(async () => {
    const store = openStore(spec);
    try {
      const docs = corpus();
      total = new Set(docs.map((d) => d.id)).size;
      const results = await store.sink.upsert(sinkDocs(docs));
      assert.ok(results.every((x) => x.status === 'ok'));
      for (const kind of ['behash', 'ja3', 'dropped_sha256'] as const) {
        const [top] = await store.sink.top(kind, 1);
        assert.ok(top && top.count > 1, `a ${kind} shared by several reports`);
        picks[kind] = top.value;
      }
    } finally {
      await store.close();
    }
    const w = await runCli(['watch', 'add', 'cluster', '--behash', picks.behash as string, '--retro', '--json', '--store', spec]);
    assert.equal(w.code, 0, w.stderr);
  }, 120_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const exportTo = async (name: string, args: string[]): Promise<string> => {
    const out = join(dir, name);
    const r = await runCli(['export', ...args, '--out', out, '--json', '--store', spec]);
    assert.equal(r.code, 0, r.stderr);
    const summary = JSON.parse(r.stdout) as { behaviours: number; objects: number; out: string };
    assert.equal(summary.out, out);
    assert.ok(summary.behaviours > 0, `${name}: behaviours exported`);
    return out;
  };

  test('every selection, both formats, passes the validators with no error or warning', async () => {
    const selections: [string, string[]][] = [
      ['behash', ['--behash', picks.behash as string]],
      ['ja3', ['--ja3', picks.ja3 as string]],
      ['dropped', ['--dropped-sha256', picks.dropped_sha256 as string]],
      ['hostile', ['--sigma-rule', HOSTILE_RULE]],
      ['sha256', ['--sha256', HOSTILE_SHA.toUpperCase()]],
      ['watch', ['--watch', 'cluster']],
      ['window', ['--since', '2026-10-01', '--until', '2030-01-01']],
    ];
    const files: string[] = [];
    for (const [name, args] of selections) {
      files.push(await exportTo(`${name}.stix.json`, args));
      files.push(await exportTo(`${name}.misp.json`, [...args, '--format', 'misp']));
    }
    const report = await runPythonJson<Record<string, StixReport | MispReport>>((py as { python: string }).python, CHECK, files, 240_000);
    for (const f of files) {
      const r = report[f];
      assert.ok(r, f);
      assert.deepEqual(r.problems, [], f);
      if (f.endsWith('.stix.json')) {
        const s = r as StixReport;
        assert.equal(s.duplicate_ids, 0, f);
        assert.ok((s.types['malware-analysis'] ?? 0) > 0 && s.ids_checked > 0, f);
      } else {
        const m = r as MispReport;
        assert.ok((m.names['sandbox-report'] ?? 0) > 0 && m.object_attributes > 0, f);
      }
    }
    // the window holds every report (the store's paging itself: the sink conformance suite)
    assert.equal((report[join(dir, 'window.stix.json')] as StixReport).types['malware-analysis'], total);
    assert.equal((report[join(dir, 'window.misp.json')] as MispReport).names['sandbox-report'], total);
    // the hostile report's malicious verdict gives indicators, each pattern accepted by stix2-patterns
    assert.ok((report[join(dir, 'hostile.stix.json')] as StixReport).patterns >= 5);
  }, 600_000);

  test("the pivot's behaviours are the bundle's analyses, each carrying the value", async () => {
    const file = await exportTo('behash-again.stix.json', ['--behash', picks.behash as string]);
    const bundle = JSON.parse(readFileSync(file, 'utf8')) as { objects: Record<string, unknown>[] };
    const stats = await runCli(['pivot', '--behash', picks.behash as string, '--json', '--store', spec]);
    const behaviours = (JSON.parse(stats.stdout) as { behaviours: number }).behaviours;
    const analyses = bundle.objects.filter((o) => o.type === 'malware-analysis');
    assert.equal(analyses.length, behaviours);
    for (const a of analyses) {
      const ext = Object.values(a.extensions as Record<string, Record<string, unknown>>)[0];
      assert.equal(ext?.behash, picks.behash);
    }
  }, 120_000);

  test('exporting the same selection again gives the same bytes (ids and content derive from the store)', async () => {
    const a = await exportTo('again-1.stix.json', ['--ja3', picks.ja3 as string]);
    const b = await exportTo('again-2.stix.json', ['--ja3', (picks.ja3 as string).toUpperCase()]);
    assert.equal(readFileSync(a, 'utf8'), readFileSync(b, 'utf8'));
    const c = await exportTo('again-1.misp.json', ['--ja3', picks.ja3 as string, '--format', 'misp']);
    const d = await exportTo('again-2.misp.json', ['--ja3', picks.ja3 as string, '--format', 'misp']);
    assert.equal(readFileSync(c, 'utf8'), readFileSync(d, 'utf8'));
  }, 120_000);

  test('hostile values stay data: the same strings come back from the JSON, patterns escape them', async () => {
    const file = await exportTo('hostile-data.stix.json', ['--sha256', HOSTILE_SHA]);
    const objects = (JSON.parse(readFileSync(file, 'utf8')) as { objects: Record<string, unknown>[] }).objects;
    assert.ok(objects.some((o) => o.type === 'mutex' && o.name === LONG));
    const url = objects.find((o) => o.type === 'url') as { value: string } | undefined;
    assert.ok(url && new URL(url.value).pathname.startsWith('/a'));
    const indicator = objects.find((o) => o.type === 'indicator' && String(o.pattern).startsWith('[url:value')) as { pattern: string };
    assert.ok(indicator.pattern.includes("a\\'b"), indicator.pattern);
    // "bad'host]" is not a host name: no domain object, no pattern made of it
    assert.ok(!objects.some((o) => o.type === 'domain-name' && String(o.value).includes("'")));
    const ext = Object.values(
      (objects.find((o) => o.type === 'malware-analysis') as { extensions: Record<string, { sigma_rules: { rule_id: string }[] }> })
        .extensions,
    )[0];
    assert.equal(ext?.sigma_rules[0]?.rule_id, HOSTILE_RULE);
  }, 120_000);

  test.skipIf(esSkip)(
    `the same selection from Elasticsearch: the same objects, as valid${esSkip ? ` [skipped: ${esSkip}]` : ''}`,
    async () => {
      const real = openRealStore(es as Exclude<typeof es, { skip: string }>);
      try {
        const results = await real.store.sink.upsert(sinkDocs(corpus()));
        assert.ok(results.every((x) => x.status === 'ok'));
        const env = { SANDTRAIL_ELASTICSEARCH_INDEX_PREFIX: real.prefix };
        const files: string[] = [];
        for (const format of ['stix', 'misp']) {
          const out = join(dir, `es-behash.${format}.json`);
          const r = await runCli(
            [
              'export',
              '--behash',
              picks.behash as string,
              '--format',
              format,
              '--out',
              out,
              '--store',
              `es:${(es as { url: string }).url}`,
            ],
            { env },
          );
          assert.equal(r.code, 0, r.stderr);
          files.push(out);
        }
        const report = await runPythonJson<Record<string, { problems: string[] }>>(
          (py as { python: string }).python,
          CHECK,
          files,
          240_000,
        );
        for (const f of files) assert.deepEqual(report[f]?.problems, [], f);
        // the stores order a selection differently (by id; by day then id): the objects are the same,
        // the shared ones' timestamps those of the first report each store met
        const objects = (f: string): Map<string, Record<string, unknown>> =>
          new Map((JSON.parse(readFileSync(f, 'utf8')) as { objects: Record<string, unknown>[] }).objects.map((o) => [o.id as string, o]));
        const fromEs = objects(files[0] as string);
        const fromSqlite = objects(await exportTo('sqlite-behash.stix.json', ['--behash', picks.behash as string]));
        assert.deepEqual([...fromEs.keys()].sort(), [...fromSqlite.keys()].sort());
        for (const [id, o] of fromEs) if (o.type === 'malware-analysis' || !('created' in o)) assert.deepEqual(o, fromSqlite.get(id), id);
      } finally {
        await real.close();
      }
    },
    300_000,
  );

  test('a full disk ends the export non-zero, naming the cause, and leaves no file behind', async () => {
    const small = smallFilesystem(dir, 1);
    assert.ok(typeof small !== 'string', small as string);
    const target = join(small.path, 'window.stix.json');
    const r = await runCli(['export', '--since', '2026-10-01', '--out', target, '--store', spec]);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /--out .*window\.stix\.json: cannot write it \(ENOSPC\)/);
    assert.deepEqual(readdirSync(small.path), []);
    const missing = await runCli(['export', '--behash', 'x', '--out', join(dir, 'no/such/dir/x.json'), '--store', spec]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /cannot write it \(ENOENT\)/);
  }, 120_000);

  test('misuse ends at once with a usage error and writes nothing', async () => {
    for (const args of [
      [],
      ['--behash', 'x', '--ja3', 'y'],
      ['--behash', ' '],
      ['--since', 'yesterday-ish'],
      ['--behash', 'x', '--format', 'xml'],
    ]) {
      const r = await runCli(['export', ...args, '--store', spec]);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.equal(r.stdout, '');
    }
    const missing = await runCli(['export', '--watch', 'nope', '--out', join(dir, 'nope.json'), '--store', spec]);
    assert.notEqual(missing.code, 0);
    assert.match(missing.stderr, /no watch named "nope"/);
    const none = await runCli(['export', '--behash', 'x', '--store', `sqlite:${join(dir, 'absent.db')}`]);
    assert.notEqual(none.code, 0);
  }, 120_000);
});
