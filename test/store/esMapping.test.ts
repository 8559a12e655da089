import assert from 'node:assert/strict';
import { describe, test } from 'vitest';
import {
  artefactMappings,
  behaviourMappings,
  ecsProjection,
  MAPPING_VERSION,
  PIVOT_FIELDS,
  privateFileMappings,
  setupPlan,
  sourceBytes,
  sourceJson,
  stripProjection,
  watchHitMappings,
  collectionMappings,
  collectionObjectMappings,
  watchMappings,
} from '../../src/store/index.js';
import { makeDoc } from './sinkConformance.js';

type Props = Record<string, Record<string, unknown>>;

/** Every mapped leaf field as dotted path → its mapping. */
function leaves(props: Props, prefix = ''): Map<string, Record<string, unknown>> {
  const out = new Map<string, Record<string, unknown>>();
  for (const [k, v] of Object.entries(props)) {
    const path = `${prefix}${k}`;
    if (v.properties && v.type !== 'nested') {
      for (const [p, m] of leaves(v.properties as Props, `${path}.`)) out.set(p, m);
    } else {
      out.set(path, v);
      if (v.type === 'nested') for (const [p, m] of leaves(v.properties as Props, `${path}.`)) out.set(p, m);
    }
  }
  return out;
}

const mapping = behaviourMappings() as { dynamic: unknown; properties: Props };
const fields = leaves(mapping.properties);

describe('behaviour index design', () => {
  test('dynamic is false at the root: new upstream fields never add mappings', () => {
    assert.equal(mapping.dynamic, false);
  });

  test('every pivot and identifier is a keyword; hashes share the lower-case normalizer', () => {
    for (const f of [
      ...Object.values(PIVOT_FIELDS),
      'sha256',
      'file.hash.sha256',
      'file.hash.md5',
      'file.hash.sha1',
      'tls.client.ja3',
      'tls.server.ja3s',
      'threat.technique.id',
      'rule.id',
      'dns.question.name',
      'related.hash',
      'related.hosts',
      'attributes.files_dropped.sha256',
      'attributes.mitre_attack_techniques.id',
      'attributes.sigma_analysis_results.rule_id',
      'attributes.ids_alerts.rule_id',
    ]) {
      const m = fields.get(f);
      assert.equal(m?.type, 'keyword', f);
      assert.equal(m?.normalizer, 'sandtrail_lowercase', f);
    }
    for (const f of ['id', 'sandbox_name', 'attributes.verdicts', 'attributes.tags']) assert.equal(fields.get(f)?.type, 'keyword', f);
    for (const f of ['destination.ip', 'related.ip', 'attributes.ip_traffic.destination_ip']) assert.equal(fields.get(f)?.type, 'ip', f);
  });

  test('nested only where two sub-fields must match in one element; flattened or disabled for wide maps', () => {
    const nested = [...fields].filter(([, m]) => m.type === 'nested').map(([p]) => p);
    assert.deepEqual(nested, ['attributes.dns_lookups']);
    for (const f of [
      'attributes.registry_keys_set',
      'attributes.exiftool',
      'attributes.tls.issuer',
      'attributes.http_conversations.request_headers',
    ]) {
      assert.equal(fields.get(f)?.type, 'flattened', f);
    }
    for (const f of ['attributes.processes_tree', 'relationships', 'attributes.sigma_analysis_results.match_context']) {
      assert.equal(fields.get(f)?.enabled, false, f);
    }
  });

  test('dates are epoch seconds mapped as dates; every keyword has ignore_above', () => {
    for (const f of ['analysis_date', 'last_modification_date', '@timestamp']) {
      assert.deepEqual(fields.get(f), { type: 'date', format: 'epoch_second', ignore_malformed: true }, f);
    }
    for (const [p, m] of fields) if (m.type === 'keyword' && p !== 'id') assert.ok(Number(m.ignore_above) > 0, p);
  });

  test('the mapped-field budget leaves room: the settings limit is well above what the mapping uses', () => {
    const plan = setupPlan();
    const settings = plan[0]?.body as { template: { settings: { index: { mapping: { total_fields: { limit: number } } } } } };
    const limit = settings.template.settings.index.mapping.total_fields.limit;
    assert.equal(limit, 2000);
    // objects count towards the limit too; leaves + intermediate objects stay far below it
    assert.ok(fields.size * 2 < limit, `${fields.size} leaf fields`);
  });

  test('the setup plan: component templates, lifecycle policy, index template, undated partition with the read alias, bookkeeping indices', () => {
    const plan = setupPlan({ prefix: 'hunt', replicas: 0, shards: 3, totalFieldsLimit: 1500, refreshInterval: '30s' });
    assert.deepEqual(
      plan.map((s) => `${s.method} ${s.path} ${s.when}`),
      [
        'PUT /_component_template/hunt-behaviours-settings always',
        'PUT /_component_template/hunt-behaviours-mappings always',
        'PUT /_ilm/policy/hunt-behaviours always',
        'PUT /_index_template/hunt-behaviours always',
        'PUT /hunt-behaviours-000001 missing',
        'PUT /hunt-behaviours/_mapping exists',
        'PUT /_index_template/hunt-dead-letters always',
        'PUT /hunt-dead-letters missing',
        'PUT /_index_template/hunt-batches always',
        'PUT /hunt-batches missing',
        'PUT /_index_template/hunt-private-files always',
        'PUT /hunt-private-files missing',
        'PUT /_index_template/hunt-artefacts always',
        'PUT /hunt-artefacts missing',
        'PUT /_index_template/hunt-watches always',
        'PUT /hunt-watches missing',
        'PUT /_index_template/hunt-watch-hits always',
        'PUT /hunt-watch-hits missing',
        'PUT /_index_template/hunt-collections always',
        'PUT /hunt-collections missing',
        'PUT /_index_template/hunt-collection-objects always',
        'PUT /hunt-collection-objects missing',
        'PUT /_index_template/hunt-locator always',
        'PUT /hunt-locator missing',
      ],
    );
    const meta = { managed_by: 'sandtrail', mapping_version: MAPPING_VERSION };
    // retention off: a hot phase only, nothing is ever deleted
    assert.deepEqual(plan[2]?.body, {
      policy: { _meta: meta, phases: { hot: { min_age: '0ms', actions: { set_priority: { priority: 100 } } } } },
    });
    assert.deepEqual(plan[3]?.body, {
      index_patterns: ['hunt-behaviours-*'],
      composed_of: ['hunt-behaviours-settings', 'hunt-behaviours-mappings'],
      template: {
        settings: { index: { lifecycle: { name: 'hunt-behaviours', parse_origination_date: true } } },
        aliases: { 'hunt-behaviours': {} },
      },
      priority: 200,
      version: MAPPING_VERSION,
      _meta: { ...meta, description: 'sandtrail behaviour reports: one index per day of last_modification_date, read through the alias' },
    });
    assert.deepEqual(plan[4]?.body, {
      settings: { index: { number_of_shards: 1, lifecycle: { name: '', parse_origination_date: false } } },
      aliases: { 'hunt-behaviours': { is_write_index: false } },
    });
    const index = (plan[0]?.body as { template: { settings: { index: Record<string, unknown> } } }).template.settings.index;
    assert.equal(index.number_of_shards, 3);
    assert.equal(index.number_of_replicas, 0);
    assert.equal(index.refresh_interval, '30s');
    assert.deepEqual(index.mapping, {
      total_fields: { limit: 1500 },
      depth: { limit: 20 },
      nested_fields: { limit: 10 },
      nested_objects: { limit: 10000 },
    });
    // one primary shard a day by default: 8.6 GB a million behaviours, 9-26 GB a day at 1-3 M
    const defaults = (setupPlan()[0]?.body as { template: { settings: { index: Record<string, unknown> } } }).template.settings.index;
    assert.equal(defaults.number_of_shards, 1);
  });

  test('with retention, the policy deletes a day index once its whole day is past retention', () => {
    const plan = setupPlan({ prefix: 'hunt', retentionDays: 30 });
    const policy = plan.find((s) => s.path === '/_ilm/policy/hunt-behaviours');
    assert.deepEqual((policy?.body as { policy: { phases: unknown } }).policy.phases, {
      hot: { min_age: '0ms', actions: { set_priority: { priority: 100 } } },
      delete: { min_age: '31d', actions: { delete: {} } },
    });
    assert.match(policy?.description ?? '', /deleted 31d after its date/);
  });
});

describe('private file index design', () => {
  const pm = privateFileMappings() as { dynamic: unknown; properties: Props };
  const pf = leaves(pm.properties);

  test('its own index and template, outside the behaviour alias, with the hash normalizer and the behaviours shard layout', () => {
    const plan = setupPlan({ prefix: 'hunt', replicas: 0, shards: 3 });
    const template = plan.find((s) => s.path === '/_index_template/hunt-private-files')?.body as {
      index_patterns: string[];
      composed_of?: unknown;
      template: { settings: { index: Record<string, unknown>; analysis: unknown }; mappings: unknown };
    };
    assert.deepEqual(template.index_patterns, ['hunt-private-files']);
    assert.equal(template.composed_of, undefined);
    assert.deepEqual(template.template.mappings, privateFileMappings());
    assert.deepEqual(template.template.settings.index, { number_of_shards: 3, number_of_replicas: 0 });
    assert.deepEqual(template.template.settings.analysis, {
      normalizer: { sandtrail_lowercase: { type: 'custom', char_filter: [], filter: ['lowercase'] } },
    });
    assert.deepEqual(
      plan.find((s) => s.path === '/hunt-private-files'),
      {
        method: 'PUT',
        path: '/hunt-private-files',
        body: {},
        when: 'missing',
        target: 'hunt-private-files',
        description: 'index hunt-private-files',
      },
    );
  });

  test('hashes, vhash, tags and TrID file types are keywords; numbers, date; arbitrary shapes never parsed', () => {
    assert.equal(pm.dynamic, false);
    for (const f of ['sha256', 'sha1', 'md5']) {
      assert.deepEqual(pf.get(f), { type: 'keyword', normalizer: 'sandtrail_lowercase', ignore_above: 1024 }, f);
    }
    for (const f of ['vhash', 'ssdeep', 'tags', 'trid.file_type', 'magic', 'type']) {
      assert.equal(pf.get(f)?.type, 'keyword', f);
      assert.equal(pf.get(f)?.normalizer, undefined, f);
      assert.equal(pf.get(f)?.ignore_above, 1024, f);
    }
    assert.deepEqual(pf.get('magic')?.fields, { text: { type: 'text' } });
    assert.equal(pf.get('size')?.type, 'long');
    assert.equal(pf.get('trid.probability')?.type, 'float');
    assert.deepEqual(pf.get('fetched_at'), { type: 'date', format: 'epoch_second', ignore_malformed: true });
    assert.equal(pf.get('exiftool')?.type, 'flattened');
    for (const f of ['gti_assessment', 'attributes']) assert.deepEqual(pf.get(f), { type: 'object', enabled: false }, f);
    assert.equal([...pf.values()].filter((m) => m.type === 'nested').length, 0);
  });
});

describe('artefact index design', () => {
  test('its own small index and template, outside the behaviour alias, with a fixed explicit mapping', () => {
    const plan = setupPlan({ prefix: 'hunt', replicas: 2, shards: 3, bookkeepingReplicas: 0 });
    const template = plan.find((s) => s.path === '/_index_template/hunt-artefacts')?.body as {
      index_patterns: string[];
      composed_of?: unknown;
      template: { settings: unknown; mappings: unknown };
    };
    assert.deepEqual(template.index_patterns, ['hunt-artefacts']);
    assert.equal(template.composed_of, undefined);
    // bookkeeping-sized: one shard, the bookkeeping replicas
    assert.deepEqual(template.template.settings, { index: { number_of_shards: 1, number_of_replicas: 0 } });
    assert.deepEqual(template.template.mappings, artefactMappings());
    assert.deepEqual(
      plan.find((s) => s.path === '/hunt-artefacts'),
      { method: 'PUT', path: '/hunt-artefacts', body: {}, when: 'missing', target: 'hunt-artefacts', description: 'index hunt-artefacts' },
    );
  });

  test('behaviour_id, kind, path, sha256 and source are keywords; size and the report version longs; fetched_at epoch millis', () => {
    const am = artefactMappings() as { dynamic: unknown; properties: Props };
    assert.equal(am.dynamic, false);
    const types = Object.fromEntries(Object.entries(am.properties).map(([k, v]) => [k, v.type]));
    assert.deepEqual(types, {
      behaviour_id: 'keyword',
      kind: 'keyword',
      path: 'keyword',
      size: 'long',
      sha256: 'keyword',
      source: 'keyword',
      fetched_at: 'date',
      last_modified: 'long',
    });
    // exact ids: the sandbox name in a behaviour id is case-sensitive
    assert.equal(am.properties.behaviour_id?.normalizer, undefined);
    assert.equal(am.properties.fetched_at?.format, 'epoch_millis');
  });
});

describe('watch index design', () => {
  test('two small indices of their own with templates; notify (webhook secrets) is not indexed; hits sort on at, version, id', () => {
    const plan = setupPlan({ prefix: 'hunt', replicas: 2, bookkeepingReplicas: 0 });
    for (const [name, mappings] of [
      ['hunt-watches', watchMappings()],
      ['hunt-watch-hits', watchHitMappings()],
      ['hunt-collections', collectionMappings()],
      ['hunt-collection-objects', collectionObjectMappings()],
    ] as const) {
      const template = plan.find((s) => s.path === `/_index_template/${name}`)?.body as {
        index_patterns: string[];
        template: { settings: unknown; mappings: unknown };
      };
      assert.deepEqual(template.index_patterns, [name]);
      assert.deepEqual(template.template.settings, { index: { number_of_shards: 1, number_of_replicas: 0 } });
      assert.deepEqual(template.template.mappings, mappings);
      assert.deepEqual(
        plan.find((s) => s.path === `/${name}`),
        { method: 'PUT', path: `/${name}`, body: {}, when: 'missing', target: name, description: `index ${name}` },
      );
    }
    const wm = watchMappings() as { dynamic: unknown; properties: Props };
    assert.equal(wm.dynamic, false);
    assert.deepEqual(wm.properties.notify, { type: 'object', enabled: false });
    const hm = watchHitMappings() as { dynamic: unknown; properties: Props };
    assert.equal(hm.dynamic, false);
    const types = Object.fromEntries([...leaves(hm.properties)].map(([k, v]) => [k, v.type]));
    assert.deepEqual(types, {
      watch: 'keyword',
      behaviour_id: 'keyword',
      last_modified: 'date',
      sha256: 'keyword',
      sandbox: 'keyword',
      'matched.kind': 'keyword',
      'matched.value': 'keyword',
      at: 'date',
    });
    assert.equal(hm.properties.at?.format, 'epoch_millis');
    assert.equal(hm.properties.last_modified?.format, 'epoch_second');
  });
});

describe('ECS projection', () => {
  const doc = makeDoc('a'.repeat(64), 'Zenbox', 2000, {
    behash: 'BH',
    tls: [{ ja3: 'A'.repeat(32), ja3s: 'b'.repeat(32), sni: 'Evil.example' }],
    files_dropped: [{ path: 'x.exe', sha256: 'd'.repeat(64) }],
    sigma_analysis_results: [{ rule_id: 'Sig-1' }],
    mitre_attack_techniques: [{ id: 'T1055' }, { id: 't1055' }],
    dns_lookups: [{ hostname: 'c2.example', resolved_ips: ['10.0.0.1', 'not-an-ip'] }],
    ip_traffic: [{ destination_ip: '10.0.0.2', destination_port: 443 }],
    ids_alerts: [{ rule_id: '2024', alert_context: { dest_ip: '10.0.0.3', hostname: 'ids.example' } }],
  });

  test('projects pivots into ECS fields, lower-cased, de-duplicated, only valid IPs', () => {
    assert.deepEqual(ecsProjection(doc), {
      '@timestamp': 1995,
      event: { kind: 'event', category: ['malware'], dataset: 'gti.file_behaviour', module: 'sandtrail' },
      file: { hash: { sha256: 'a'.repeat(64) } },
      tls: { client: { ja3: ['a'.repeat(32)], server_name: ['evil.example'] }, server: { ja3s: ['b'.repeat(32)] } },
      threat: { framework: 'MITRE ATT&CK', technique: { id: ['t1055'] } },
      rule: { id: ['sig-1', '2024'] },
      dns: { question: { name: ['c2.example'] } },
      destination: { ip: ['10.0.0.2', '10.0.0.3'] },
      related: {
        hash: ['a'.repeat(64), 'd'.repeat(64), 'a'.repeat(32), 'b'.repeat(32), 'bh'],
        ip: ['10.0.0.1', '10.0.0.2', '10.0.0.3'],
        hosts: ['c2.example', 'evil.example', 'ids.example'],
      },
    });
  });

  test('the indexed source is the canonical JSON plus the projection; reading strips it back', () => {
    const json = JSON.stringify(doc);
    const source = JSON.parse(sourceJson(structuredClone(doc), json)) as Record<string, unknown>;
    assert.deepEqual(source, { ...doc, ...ecsProjection(doc) });
    assert.deepEqual(stripProjection(source), doc);
  });

  test('the bytes of a chunk document are spliced into the same source, whatever the text around them', () => {
    const json = JSON.stringify(doc);
    const expected = Buffer.from(sourceJson(structuredClone(doc), json));
    // a chunk carries UTF-8 bytes (a trailing newline included when a writer left one); a string is encoded
    for (const carried of [Buffer.from(json), Buffer.from(`${json}\n \r\t`), json]) {
      assert.deepEqual(sourceBytes(structuredClone(doc), carried), expected);
    }
    // not an object's text: built from the document instead of spliced
    const odd = sourceBytes(structuredClone(doc), Buffer.from('{}'));
    assert.deepEqual(JSON.parse(odd.toString('utf8')), { ...doc, ...ecsProjection(doc) });
  });
});
