import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, test } from 'vitest';
import {
  artefactMappings,
  batchMappings,
  behaviourMappings,
  kibanaNdjson,
  kibanaObjects,
  privateFileMappings,
} from '../../src/store/index.js';
import { runCli } from '../support/cli.js';

type Props = Record<string, { properties?: Props; type?: string }>;

function mapped(props: Props, path: string): string | undefined {
  const [head, ...rest] = path.split('.');
  // ECS names such as `@timestamp` have no dots; dotted paths walk `properties`
  const m = props[head as string];
  if (!m) return undefined;
  if (rest.length === 0) return m.type ?? 'object';
  return m.properties ? mapped(m.properties, rest.join('.')) : undefined;
}

const behaviourProps = (behaviourMappings() as { properties: Props }).properties;
const batchProps = (batchMappings() as { properties: Props }).properties;
const privateProps = (privateFileMappings() as { properties: Props }).properties;
const artefactProps = (artefactMappings() as { properties: Props }).properties;
const objects = kibanaObjects();
const byId = new Map(objects.map((o) => [o.id, o]));

describe('Kibana saved objects', () => {
  test('the shipped NDJSON is exactly what the generator produces', () => {
    assert.equal(readFileSync('kibana/sandtrail.ndjson', 'utf8'), kibanaNdjson());
  });

  test('ids are unique and every reference resolves to a shipped object of the right type', () => {
    assert.equal(byId.size, objects.length);
    for (const o of objects) {
      for (const r of o.references) assert.equal(byId.get(r.id)?.type, r.type, `${o.id} -> ${r.id}`);
    }
  });

  test('a saved search per pivot, and pivot fields formatted as links to that pivot search', () => {
    const view = byId.get('sandtrail-behaviours');
    assert.equal(view?.type, 'index-pattern');
    assert.equal(view?.attributes.title, 'sandtrail-behaviours');
    const formats = JSON.parse(view?.attributes.fieldFormatMap as string) as Record<
      string,
      { id: string; params: { urlTemplate: string } }
    >;
    const pivots: [string, string][] = [
      ['behash', 'pivots.behash'],
      ['sigma', 'pivots.sigma_rule_ids'],
      ['ja3', 'pivots.ja3'],
      ['ja3s', 'pivots.ja3s'],
      ['dropped', 'pivots.dropped_sha256'],
      ['sha256', 'file.hash.sha256'],
    ];
    for (const [key, field] of pivots) {
      const search = byId.get(`sandtrail-pivot-${key}`);
      assert.equal(search?.type, 'search', key);
      const f = formats[field];
      assert.equal(f?.id, 'url', field);
      assert.ok(f?.params.urlTemplate.startsWith(`/app/discover#/view/sandtrail-pivot-${key}?`), field);
      assert.ok(f?.params.urlTemplate.includes(`${field}:"{{value}}"`), field);
    }
    // ECS pivots link too
    for (const f of [
      'tls.client.ja3',
      'tls.server.ja3s',
      'threat.technique.id',
      'rule.id',
      'dns.question.name',
      'destination.ip',
      'related.hash',
    ]) {
      assert.equal(formats[f]?.id, 'url', f);
    }
  });

  test('the dashboard has every hunting panel, and every field the objects use is mapped', () => {
    const dash = byId.get('sandtrail-hunting');
    assert.equal(dash?.type, 'dashboard');
    const panels = dash!.references.map((r) => byId.get(r.id)?.attributes.title);
    assert.deepEqual(panels, [
      '[sandtrail] Behaviours per sandbox over time',
      '[sandtrail] Ingestion lag',
      '[sandtrail] Top behash clusters',
      '[sandtrail] Top sigma rules',
      '[sandtrail] Top JA3',
      '[sandtrail] Top JA3S',
      '[sandtrail] Top dropped files',
      '[sandtrail] Pivot search',
    ]);
    for (const o of objects) {
      // the batches, private-files and artefacts data views, and what reads through them, use their own mappings
      const on = (view: string): boolean => o.id === view || o.references.some((r) => r.id === view);
      const props = on('sandtrail-batches')
        ? batchProps
        : on('sandtrail-private-files')
          ? privateProps
          : on('sandtrail-artefacts')
            ? artefactProps
            : behaviourProps;
      const used: string[] = [];
      if (o.type === 'visualization') {
        const vis = JSON.parse(o.attributes.visState as string) as { aggs: { params: { field?: string } }[] };
        for (const a of vis.aggs) if (a.params.field) used.push(a.params.field);
      }
      if (o.type === 'search') used.push(...(o.attributes.columns as string[]));
      if (o.type === 'index-pattern' && o.attributes.timeFieldName) used.push(o.attributes.timeFieldName as string);
      for (const f of used) assert.ok(mapped(props, f), `${o.id} uses unmapped field ${f}`);
    }
  });
});

describe('Kibana objects of the private files', () => {
  test('a data view on the private-files index only, timed by fetched_at, and a saved search on it', () => {
    const view = byId.get('sandtrail-private-files');
    assert.equal(view?.type, 'index-pattern');
    assert.equal(view?.attributes.title, 'sandtrail-private-files');
    assert.equal(view?.attributes.timeFieldName, 'fetched_at');
    const search = byId.get('sandtrail-private-files-search');
    assert.equal(search?.type, 'search');
    assert.deepEqual(search?.references, [
      { id: 'sandtrail-private-files', name: 'kibanaSavedObjectMeta.searchSourceJSON.index', type: 'index-pattern' },
    ]);
    // no behaviour object reads through the private view, and the private objects never read the behaviours
    for (const o of objects) {
      const refs = o.references.map((r) => r.id);
      if (refs.includes('sandtrail-private-files')) assert.deepEqual(refs, ['sandtrail-private-files'], o.id);
    }
    const formats = JSON.parse(view?.attributes.fieldFormatMap as string) as Record<string, { params: { urlTemplate: string } }>;
    assert.ok(formats.sha256?.params.urlTemplate.startsWith('/app/discover#/view/sandtrail-pivot-sha256?'));
    assert.ok(formats.sha256?.params.urlTemplate.includes('file.hash.sha256:"{{value}}"'));
    assert.ok(formats.vhash?.params.urlTemplate.startsWith('/app/discover#/view/sandtrail-private-files-search?'));
    for (const f of Object.keys(formats)) assert.ok(privateProps[f], `formatted field ${f} is mapped`);
  });
});

describe('Kibana objects of the artefacts', () => {
  test('a data view on the artefacts index only, timed by fetched_at, whose behaviour_id links to the report', () => {
    const view = byId.get('sandtrail-artefacts');
    assert.equal(view?.type, 'index-pattern');
    assert.equal(view?.attributes.title, 'sandtrail-artefacts');
    assert.equal(view?.attributes.timeFieldName, 'fetched_at');
    assert.deepEqual(view?.references, []);
    assert.ok(!objects.some((o) => o.references.some((r) => r.id === 'sandtrail-artefacts')), 'nothing reads through it yet');
    const formats = JSON.parse(view?.attributes.fieldFormatMap as string) as Record<string, { params: { urlTemplate: string } }>;
    assert.deepEqual(Object.keys(formats), ['behaviour_id']);
    assert.ok(formats.behaviour_id?.params.urlTemplate.startsWith('/app/discover#/view/sandtrail-pivot-any?'));
    assert.ok(formats.behaviour_id?.params.urlTemplate.includes('id:"{{value}}"'));
    assert.ok(artefactProps.behaviour_id && behaviourProps.id, 'both ends of the link are mapped');
    assert.equal(kibanaObjects('team-b').find((o) => o.id === 'team-b-artefacts')?.attributes.title, 'team-b-artefacts');
  });
});

interface Received {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

describe('kibana import', () => {
  const received: Received[] = [];
  let reply: { status: number; body: unknown } = { status: 200, body: {} };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(reply.status, { 'content-type': 'application/json' }).end(JSON.stringify(reply.body));
    });
  });
  let url = '';
  beforeAll(async () => {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => server.close());

  test('posts the shipped NDJSON to the saved objects import API with overwrite and auth', async () => {
    received.length = 0;
    reply = { status: 200, body: { success: true, successCount: objects.length, errors: [] } };
    const r = await runCli(['kibana', 'import', '--url', `${url}/`, '--space', 'hunters'], {
      env: { ELASTICSEARCH_API_KEY: 'c2VjcmV0LWtleQ==' },
    });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`imported ${objects.length} saved objects`));
    assert.equal(received.length, 1);
    const req = received[0]!;
    assert.equal(req.method, 'POST');
    assert.equal(req.url, '/s/hunters/api/saved_objects/_import?overwrite=true');
    assert.equal(req.headers['kbn-xsrf'], 'sandtrail');
    assert.equal(req.headers.authorization, 'ApiKey c2VjcmV0LWtleQ==');
    assert.match(String(req.headers['content-type']), /^multipart\/form-data; boundary=/);
    assert.ok(req.body.includes('filename="sandtrail.ndjson"'));
    assert.ok(req.body.includes(kibanaNdjson()), 'the multipart file part carries the NDJSON unchanged');
    assert.ok(!r.stdout.includes('c2VjcmV0LWtleQ==') && !r.stderr.includes('c2VjcmV0LWtleQ=='));
  });

  test('Kibana credentials win over the Elasticsearch ones; a partial import exits 1 and lists the errors', async () => {
    received.length = 0;
    reply = { status: 200, body: { success: false, successCount: 16, errors: [{ id: 'sandtrail-hunting', error: { type: 'conflict' } }] } };
    const r = await runCli(['kibana', 'import', '--json'], {
      env: { KIBANA_URL: url, SANDTRAIL_KIBANA_USERNAME: 'hunter', SANDTRAIL_KIBANA_PASSWORD: 'pw', ELASTICSEARCH_API_KEY: 'other' },
    });
    assert.equal(r.code, 1, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), {
      success: false,
      successCount: 16,
      errors: [{ id: 'sandtrail-hunting', error: { type: 'conflict' } }],
    });
    assert.equal(received[0]?.url, '/api/saved_objects/_import?overwrite=true');
    assert.equal(received[0]?.headers.authorization, `Basic ${Buffer.from('hunter:pw').toString('base64')}`);
  });

  test("a user and password in Kibana's URL are sent as its credentials and never printed, even when Kibana cannot be reached", async () => {
    received.length = 0;
    reply = { status: 200, body: { success: true, successCount: objects.length, errors: [] } };
    const withCreds = url.replace('://', '://kib:KPASS%401@');
    const r = await runCli(['kibana', 'import', '--url', withCreds, '--json'], { env: { ELASTICSEARCH_API_KEY: 'other' } });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(received[0]?.headers.authorization, `Basic ${Buffer.from('kib:KPASS@1').toString('base64')}`);
    const gone = await runCli(['kibana', 'import', '--url', 'http://kib:KPASS_1@127.0.0.1:9', '--json']);
    assert.equal(gone.code, 1);
    assert.match(gone.stderr, /cannot reach Kibana at http:\/\/127\.0\.0\.1:9/);
    for (const out of [r, gone]) assert.ok(!`${out.stdout}${out.stderr}`.includes('KPASS'), `${out.stdout}${out.stderr}`);
  });

  test('refused credentials give a one-line error without the secret; --dry-run sends nothing', async () => {
    received.length = 0;
    reply = { status: 401, body: { statusCode: 401, error: 'Unauthorized', message: 'unable to authenticate' } };
    const r = await runCli(['kibana', 'import', '--url', url], { env: { ELASTICSEARCH_API_KEY: 'dG9wLXNlY3JldA==' } });
    assert.equal(r.code, 1, 'refused credentials are exit 1, as on Elasticsearch');
    assert.match(r.stderr, /Kibana import failed with HTTP 401: .*check kibana\.apiKey/);
    assert.ok(!r.stderr.includes('dG9wLXNlY3JldA=='));

    received.length = 0;
    const dry = await runCli(['kibana', 'import', '--url', url, '--dry-run']);
    assert.equal(dry.code, 0);
    assert.equal(dry.stdout, kibanaNdjson());
    assert.equal(received.length, 0);

    const other = await runCli(['kibana', 'import', '--dry-run'], { env: { SANDTRAIL_ELASTICSEARCH_INDEX_PREFIX: 'team-b' } });
    assert.equal(other.stdout, kibanaNdjson('team-b'));
    assert.match(other.stderr, /^\(dry run: \d+ saved objects generated for index prefix team-b; nothing was sent\)$/m);
    assert.match(dry.stderr, /^\(dry run: \d+ saved objects from .*sandtrail\.ndjson; nothing was sent\)$/m);
  });
});
