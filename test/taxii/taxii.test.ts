/**
 * `sandtrail serve`'s TAXII 2.1 as a SIEM's or TIP's connector meets it: taxii2-client discovers
 * the server, lists the collections (a watchlist's, a saved export's) and pages each with
 * `added_after` kept between polls; every object comes once, a poll after the last finds nothing,
 * new hits come in the next poll and only they. What it gets passes the STIX validator at its
 * strictest (test/share/check_exports.py). Access: HTTP Basic with a serve key, never the GTI key.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { normalizeRecord, type BehaviourDoc } from '../../src/normalize/index.js';
import { openStore, type Store, type WatchHit } from '../../src/store/index.js';
import { Rng, generateRecord } from '../../src/synth/index.js';
import { runCli, startCli, type StartedCli } from '../support/cli.js';
import { runPythonJson, testPython } from '../support/python.js';
import { sinkDocs } from '../store/sinkConformance.js';
import { openRealStore, realCluster } from '../support/realElasticsearch.js';

const py = testPython();
const skip = 'skip' in py ? py.skip : undefined;
const es = await realCluster();

/** A store the suite runs on: its spec and environment for the CLI, and a handle of the test's own. */
interface Backend {
  spec: string;
  env: Record<string, string>;
  open(): Store;
  close(): Promise<void>;
}
const BEHASH = 'c0ffee'.repeat(5) + 'aa';
const KEY = 'taxii-test-key-0123456789';
const GTI_KEY = 'gti-key-never-accepted-here-0123';

interface Polled {
  title: string;
  can_read: boolean;
  can_write: boolean;
  media_types: string[];
  pages: number;
  objects: number;
  distinct: number;
  ids: string[];
  manifest: number;
  manifest_distinct: number;
  added_after: string | null;
  bundle: string | null;
}
interface Poll {
  title: string;
  versions: string[];
  collections: Record<string, Polled>;
}

/** Reports of one cluster (a behash shared, as the feed's clusters do), one of them hostile, and others. */
function reports(seed: string, n: number, behash: string | undefined, hostile = false): BehaviourDoc[] {
  const rng = new Rng(seed);
  const docs: BehaviourDoc[] = [];
  for (let i = 0; i < n; i++) {
    const r = generateRecord(rng, { big: false, lastModificationDate: 1_793_491_200 + i * 600 });
    if (behash) r.attributes.behash = behash;
    if (hostile && i === 0) {
      r.attributes.verdicts = ['MALWARE'];
      r.attributes.mutexes_created = [`Global\\'quote"]`, '\u0000ctl\u001b[31m', `m'"]\\${'x'.repeat(50_000)}`];
      r.attributes.http_conversations = [{ url: `http://evil.example/a'b"c]d?q=\u202e`, request_method: 'GET' }];
      r.attributes.sigma_analysis_results = [{ rule_id: `sig'"]\u0007\u202e`, rule_title: 't', rule_level: 'high' }];
    }
    const d = normalizeRecord(r);
    if (d.ok) docs.push(d.doc);
  }
  return docs;
}

const sqlite = (dir: string): Backend => {
  const spec = `sqlite:${join(dir, 'store.db')}`;
  return { spec, env: {}, open: () => openStore(spec), close: async () => undefined };
};
const elasticsearch = (): Backend => {
  const real = openRealStore(es as Exclude<typeof es, { skip: string }>);
  const spec = `es:${(es as { url: string }).url}`;
  return {
    spec,
    env: { SANDTRAIL_ELASTICSEARCH_INDEX_PREFIX: real.prefix },
    // the suite's own handle writes with refresh wait_for, so the CLI run next reads what it wrote; closed with the suite
    open: () => ({ ...real.store, close: async () => undefined }),
    close: real.close,
  };
};

taxiiSuite('sqlite', skip, sqlite);
taxiiSuite('elasticsearch (real cluster)', skip ?? ('skip' in es ? es.skip : undefined), () => elasticsearch());

function taxiiSuite(name: string, skipWhy: string | undefined, backend: (dir: string) => Backend): void {
  describe.skipIf(skipWhy)(`TAXII 2.1 polled by taxii2-client: ${name}${skipWhy ? ` [skipped: ${skipWhy}]` : ''}`, () => {
    const dir = mkdtempSync(join(tmpdir(), 'sandtrail-taxii-'));
    let b: Backend;
    let spec = '';
    const state = join(dir, 'poll-state.json');
    const bundles = join(dir, 'bundles');
    let serve: StartedCli;
    let base = '';
    let env: Record<string, string> = {};

    beforeAll(async () => {
      b = backend(dir);
      spec = b.spec;
      env = { ...b.env, SANDTRAIL_SERVE_API_KEYS: KEY, GTI_APIKEY: GTI_KEY, SANDTRAIL_LOG_LEVEL: 'info' };
      rmSync(bundles, { recursive: true, force: true });
      await import('node:fs').then((fs) => fs.mkdirSync(bundles));
      const store = b.open();
      try {
        const docs = [...reports('taxii-cluster', 24, BEHASH, true), ...reports('taxii-others', 6, undefined)];
        assert.ok((await store.sink.upsert(sinkDocs(docs))).every((x) => x.status === 'ok'));
      } finally {
        await store.close();
      }
      const w = await runCli(['watch', 'add', 'cluster', '--behash', BEHASH, '--retro', '--store', spec], { env });
      assert.equal(w.code, 0, w.stderr);
      const s = await runCli(['export', '--behash', BEHASH, '--save', 'cluster-saved', '--json', '--store', spec], { env });
      assert.equal(s.code, 0, s.stderr);
      const saved = JSON.parse(s.stdout) as { behaviours: number; added: number };
      assert.equal(saved.behaviours, 24);
      assert.ok(saved.added > 1000, `a saved export of more than 1,000 objects (${saved.added})`);
      serve = startCli(['serve', '--port', '0', '--store', spec], env);
      for (let i = 0; i < 300 && !base; i++) {
        const m = /sandtrail serve: (http:\/\/[^/\s]+)\//.exec(serve.stderr());
        if (m?.[1]) base = m[1];
        else await new Promise((r) => setTimeout(r, 100));
      }
      assert.ok(base, `serve started: ${serve.stderr()}`);
    }, 240_000);
    afterAll(async () => {
      serve?.child.kill('SIGTERM');
      await serve?.exited;
      await b?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    const poll = (password = KEY): Promise<Poll> =>
      runPythonJson<Poll>(
        (py as { python: string }).python,
        'test/taxii/check_taxii.py',
        [`${base}/taxii2/`, 'siem', password, '100', state, bundles],
        240_000,
      );
    const basic = (key: string): string => `Basic ${Buffer.from(`siem:${key}`).toString('base64')}`;
    const get = (path: string, headers: Record<string, string> = { authorization: basic(KEY) }) =>
      fetch(`${base}${path}`, { headers: { accept: 'application/taxii+json;version=2.1', ...headers } });

    test('credentials: HTTP Basic with a serve key; none, a wrong one or the GTI key is 401 in TAXII error form', async () => {
      const refusedHeaders: Record<string, string>[] = [
        {},
        { authorization: basic('wrong-key-0123456789') },
        { authorization: basic(GTI_KEY) },
      ];
      for (const headers of refusedHeaders) {
        const r = await get('/taxii2/', headers);
        assert.equal(r.status, 401);
        assert.equal(r.headers.get('content-type'), 'application/taxii+json;version=2.1');
        assert.match(r.headers.get('www-authenticate') ?? '', /^Basic realm="sandtrail"/);
        const body = (await r.json()) as { http_status: string; title: string };
        assert.equal(body.http_status, '401');
      }
      const ok = await get('/taxii2/');
      assert.equal(ok.status, 200);
      assert.equal((await get('/taxii2/', { authorization: basic(KEY), accept: 'application/json' })).status, 406);
      const refused = await runCli(['serve', '--port', '0', '--store', spec], {
        env: { ...env, SANDTRAIL_SERVE_API_KEYS: `${KEY},${GTI_KEY}` },
      });
      assert.equal(refused.code, 2, refused.stderr);
      assert.match(refused.stderr, /GTI API key/);
    });

    test('each collection pages in full, every object once; a second poll gets nothing; new hits come next, only they', async () => {
      const first = await poll();
      assert.equal(first.title, 'sandtrail');
      assert.deepEqual(first.versions, ['application/taxii+json;version=2.1']);
      const collections = Object.values(first.collections);
      assert.deepEqual(collections.map((c) => c.title).sort(), ['export cluster-saved', 'watch cluster']);
      for (const c of collections) {
        assert.equal(c.can_read, true);
        assert.equal(c.can_write, false);
        assert.deepEqual(c.media_types, ['application/stix+json;version=2.1']);
        assert.ok(c.objects > 1000, `${c.title}: ${c.objects} objects`);
        assert.equal(c.distinct, c.objects, `${c.title}: no object twice`);
        assert.equal(c.manifest, c.objects, `${c.title}: the manifest lists what the objects gave`);
        assert.ok(c.pages >= Math.ceil(c.objects / 100), `${c.title}: paged by 100 (${c.pages} pages)`);
      }
      const [watchC, savedC] = ['watch cluster', 'export cluster-saved'].map((t) => collections.find((c) => c.title === t) as Polled);
      assert.equal(watchC?.objects, savedC?.objects, 'a watch and an export of one cluster hold the same objects');

      const second = await poll();
      for (const c of Object.values(second.collections)) {
        assert.equal(c.objects, 0, `${c.title}: nothing new`);
        assert.ok(c.added_after, 'the poll went on from where the first ended');
      }

      // three more reports of the cluster arrive and hit the watch, as the index stage records them
      const store = b.open();
      let fresh: BehaviourDoc[] = [];
      try {
        fresh = reports('taxii-late', 3, BEHASH);
        assert.ok((await store.sink.upsert(sinkDocs(fresh))).every((x) => x.status === 'ok'));
        const w = await store.watches.get('cluster');
        assert.ok(w);
        for (const d of fresh) {
          const hit: WatchHit = {
            watch: 'cluster',
            behaviourId: d.id,
            lastModified: d.last_modification_date,
            sha256: d.sha256,
            sandbox: d.sandbox_name,
            matched: w.conditions,
            at: Date.now(),
          };
          assert.equal(await store.watches.recordHit(hit, w.createdAt), true);
        }
      } finally {
        await store.close();
      }
      const third = await poll();
      const watchNew = Object.values(third.collections).find((c) => c.title === 'watch cluster') as Polled;
      const savedNew = Object.values(third.collections).find((c) => c.title === 'export cluster-saved') as Polled;
      assert.ok(watchNew.objects > 0, 'the new hits came');
      assert.equal(watchNew.distinct, watchNew.objects);
      assert.equal(watchNew.ids.filter((id) => watchC?.ids.includes(id)).length, 0, 'nothing the first poll had came again');
      assert.equal(watchNew.ids.filter((id) => id.startsWith('malware-analysis--')).length, 3, 'one analysis per new report');
      assert.equal(savedNew.objects, 0, 'a saved export holds what it held when saved');
      const fourth = await poll();
      for (const c of Object.values(fourth.collections)) assert.equal(c.objects, 0, `${c.title}: nothing new after the new hits`);

      // every object polled, the hostile report's included, passes the validator at its strictest
      const files = [...Object.values(first.collections), watchNew].flatMap((c) => (c.bundle ? [c.bundle] : []));
      const report = await runPythonJson<Record<string, { problems: string[]; duplicate_ids: number }>>(
        (py as { python: string }).python,
        'test/share/check_exports.py',
        files,
        240_000,
      );
      for (const f of files) {
        assert.deepEqual(report[f]?.problems, [], f);
        assert.equal(report[f]?.duplicate_ids, 0, f);
      }
    });

    test('an object, its versions, match filters; misuse answered in TAXII error form', async () => {
      const list = (await (await get('/taxii2/sandtrail/collections/')).json()) as { collections: { id: string; title: string }[] };
      const c = list.collections.find((x) => x.title === 'watch cluster');
      assert.ok(c);
      const objects = `/taxii2/sandtrail/collections/${c.id}/objects/`;
      const analyses = (await (await get(`${objects}?match[type]=malware-analysis`)).json()) as {
        objects: { id: string }[];
        more: boolean;
      };
      assert.equal(analyses.objects.length, 27);
      assert.equal(analyses.more, false);
      const id = analyses.objects[0]?.id as string;
      const one = (await (await get(`${objects}${id}/`)).json()) as { objects: { id: string }[] };
      assert.deepEqual(
        one.objects.map((o) => o.id),
        [id],
      );
      const versions = (await (await get(`${objects}${id}/versions/`)).json()) as { versions: string[] };
      assert.equal(versions.versions.length, 1);
      const byId = (await (await get(`${objects}?match[id]=${id}&match[version]=all`)).json()) as { objects: unknown[] };
      assert.equal(byId.objects.length, 1);
      const none = (await (await get(`${objects}?match[spec_version]=2.0`)).json()) as { objects?: unknown[]; more: boolean };
      assert.deepEqual(none, { more: false });
      for (const [path, status] of [
        [`${objects}?added_after=yesterday`, 400],
        [`${objects}?limit=0`, 400],
        [`${objects}?colour=red`, 400],
        ['/taxii2/sandtrail/collections/00000000-0000-4000-8000-000000000000/objects/', 404],
        [`${objects}indicator--00000000-0000-4000-8000-000000000000/`, 404],
      ] as const) {
        const r = await get(path);
        assert.equal(r.status, status, path);
        assert.equal(((await r.json()) as { http_status: string }).http_status, String(status), path);
      }
      const post = await fetch(`${base}${objects}`, {
        method: 'POST',
        headers: { authorization: basic(KEY), 'content-type': 'application/taxii+json;version=2.1' },
        body: '{"objects":[]}',
      });
      assert.equal(post.status, 403);
    });
  });
}
