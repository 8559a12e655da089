import assert from 'node:assert/strict';
import { afterAll, test } from 'vitest';
import { setupPlan } from '../../src/store/index.js';
import { runCli } from '../support/cli.js';
import { FakeElasticsearch } from '../support/fakeElasticsearch.js';
import { openRealStore, realCluster, singleIndexNames, type Reachable } from '../support/realElasticsearch.js';

const fake = new FakeElasticsearch();
afterAll(() => fake.close());
const cluster = await realCluster();
const skip = 'skip' in cluster ? cluster.skip : undefined;

test.skipIf(skip !== undefined)(
  `es setup on a real cluster: templates, the read alias, the bookkeeping indices, and the lifecycle policy exactly where the cluster has ILM; a second run creates nothing${skip ? ` (skipped: ${skip})` : ''}`,
  async () => {
    const real = cluster as Reachable;
    const fixture = openRealStore(real);
    const { admin, prefix } = fixture;
    try {
      const env = { SANDTRAIL_ELASTICSEARCH_INDEX_PREFIX: prefix, SANDTRAIL_RETENTION_DAYS: '45' };
      const first = await runCli(['es', 'setup', '--store', `es:${real.url}`, '--json'], { env });
      assert.equal(first.code, 0, first.stderr);
      const r = JSON.parse(first.stdout) as { alias: string; applied: string[]; created: string[]; ilm: boolean };
      const singles = singleIndexNames(prefix);
      assert.deepEqual(r.created, [`${prefix}-behaviours-000001`, ...singles]);
      // what the cluster holds, asked of the cluster
      const indices = Object.keys(await admin.indices.get({ index: `${prefix}-*` })).sort();
      assert.deepEqual(indices, [`${prefix}-behaviours-000001`, ...singles].sort());
      assert.deepEqual(Object.keys(await admin.indices.getAlias({ name: `${prefix}-behaviours` })), [`${prefix}-behaviours-000001`]);
      const templates = (await admin.indices.getIndexTemplate({ name: `${prefix}-*` })).index_templates.map((t) => t.name).sort();
      assert.deepEqual(templates, [`${prefix}-behaviours`, ...singles].sort());
      const components = (await admin.cluster.getComponentTemplate({ name: `${prefix}-*` })).component_templates.map((t) => t.name).sort();
      assert.deepEqual(components, [`${prefix}-behaviours-mappings`, `${prefix}-behaviours-settings`]);
      const hasIlm = await admin.ilm.getStatus().then(
        () => true,
        () => false,
      );
      assert.equal(r.ilm, hasIlm, 'setup asked the cluster whether it has ILM');
      const policy = r.applied.find((a) => a.startsWith('lifecycle policy'));
      if (hasIlm) {
        assert.equal(policy, `lifecycle policy ${prefix}-behaviours (a day index is deleted 46d after its date)`);
        assert.ok((await admin.ilm.getLifecycle({ name: `${prefix}-behaviours` }))[`${prefix}-behaviours`]);
      } else {
        assert.equal(policy, undefined, 'no policy where there is no ILM');
        assert.ok(
          r.applied.some((a) => a.includes('no ILM: sandtrail deletes expired days')),
          r.applied.join('; '),
        );
      }
      // a day index written now is made by the template: behind the alias, mapped, with ILM's settings only where ILM is
      await admin.index({ index: `${prefix}-behaviours-2026.11.01`, id: 'x', document: { id: 'x' }, refresh: true });
      const day = await admin.indices.get({ index: `${prefix}-behaviours-2026.11.01` });
      const settings = day[`${prefix}-behaviours-2026.11.01`]?.settings?.index as { lifecycle?: { name?: string } } | undefined;
      assert.equal(settings?.lifecycle?.name, hasIlm ? `${prefix}-behaviours` : undefined);
      assert.ok(`${prefix}-behaviours` in (day[`${prefix}-behaviours-2026.11.01`]?.aliases ?? {}));
      await admin.indices.delete({ index: `${prefix}-behaviours-2026.11.01` });

      const second = await runCli(['es', 'setup', '--store', `es:${real.url}`, '--json'], { env });
      assert.equal(second.code, 0, second.stderr);
      assert.deepEqual((JSON.parse(second.stdout) as { created: string[] }).created, []);

      // the shard arithmetic, said before the cluster refuses a day: a year at 2 shards and a
      // replica is 366 × 4 shards, past the 1,000 of one data node
      type Budget = { verdict: string; limit: number; atFull: number | null; perDay: number; text: string };
      const yearEnv = {
        ...env,
        SANDTRAIL_RETENTION_DAYS: '365',
        SANDTRAIL_ELASTICSEARCH_SHARDS: '2',
        SANDTRAIL_ELASTICSEARCH_REPLICAS: '1',
      };
      // es setup warns where a writer would refuse to start: it is how the layout gets changed
      const year = await runCli(['es', 'setup', '--store', `es:${real.url}`, '--json'], { env: yearEnv });
      assert.equal(year.code, 0, year.stderr);
      const health = await admin.cluster.health();
      const budget = (JSON.parse(year.stdout) as { shards: Budget }).shards;
      assert.equal(budget.limit, 1000 * health.number_of_data_nodes);
      assert.equal(budget.perDay, 4);
      assert.equal(budget.atFull, 366 * 4);
      if (health.number_of_data_nodes === 1) assert.equal(budget.verdict, 'exceeds', budget.text);
      const text = await runCli(['es', 'setup', '--store', `es:${real.url}`], { env: yearEnv });
      if (health.number_of_data_nodes === 1)
        assert.match(
          text.stdout,
          /warning {2}366 day indices at 2 shard\(s\) × \(1 \+ 1 replica\(s\)\) = 4 a day = 1464 shards .*new days are refused in about \d+ days: lower elasticsearch\.shards/,
        );
      const small = await runCli(['es', 'setup', '--store', `es:${real.url}`, '--json'], {
        env: { ...env, SANDTRAIL_RETENTION_DAYS: '30', SANDTRAIL_ELASTICSEARCH_SHARDS: '1', SANDTRAIL_ELASTICSEARCH_REPLICAS: '0' },
      });
      const fits = (JSON.parse(small.stdout) as { shards: Budget }).shards;
      assert.equal(fits.atFull, 31);
      assert.notEqual(fits.verdict, 'exceeds', fits.text);
      assert.deepEqual(Object.keys(await admin.indices.get({ index: `${prefix}-*` })).sort(), indices);
    } finally {
      await fixture.close();
    }
  },
);

test('es setup creates templates, the lifecycle policy, the alias and bookkeeping indices once; a second run changes nothing; no secret is printed', async () => {
  const url = await fake.listen();
  const withPassword = url.replace('http://', 'http://elastic:hunter2@');
  const first = await runCli(['es', 'setup', '--sink', `es:${withPassword}`], { env: { SANDTRAIL_ELASTICSEARCH_INDEX_PREFIX: 'cli' } });
  assert.equal(first.code, 0, first.stderr);
  assert.match(
    first.stdout,
    /created {2}cli-behaviours-000001, cli-dead-letters, cli-batches, cli-private-files, cli-artefacts, cli-watches, cli-watch-hits, cli-collections, cli-collection-objects, cli-locator\n/,
  );
  assert.match(first.stdout, /applied {2}lifecycle policy cli-behaviours \(retention off: nothing is deleted\)\n/);
  assert.match(
    first.stdout,
    /ready: read alias cli-behaviours over the daily behaviour indices on elasticsearch:http:\/\/elastic:\*\*\*@127\.0\.0\.1:\d+/,
  );
  assert.ok(!first.stdout.includes('hunter2') && !first.stderr.includes('hunter2'));
  assert.deepEqual(fake.indices().sort(), [
    'cli-artefacts',
    'cli-batches',
    'cli-behaviours-000001',
    'cli-collection-objects',
    'cli-collections',
    'cli-dead-letters',
    'cli-locator',
    'cli-private-files',
    'cli-watch-hits',
    'cli-watches',
  ]);

  const second = await runCli(['es', 'setup', '--json'], { env: { ELASTICSEARCH_URL: url, SANDTRAIL_ELASTICSEARCH_INDEX_PREFIX: 'cli' } });
  assert.equal(second.code, 0, second.stderr);
  const result = JSON.parse(second.stdout) as { alias: string; applied: string[]; created: string[] };
  assert.equal(result.alias, 'cli-behaviours');
  assert.deepEqual(result.created, []);
  assert.ok(result.applied.includes('mapping upgrade of the indices behind cli-behaviours (additive)'));
  assert.deepEqual(fake.indices().sort(), [
    'cli-artefacts',
    'cli-batches',
    'cli-behaviours-000001',
    'cli-collection-objects',
    'cli-collections',
    'cli-dead-letters',
    'cli-locator',
    'cli-private-files',
    'cli-watch-hits',
    'cli-watches',
  ]);
  const templates = fake.templates();
  assert.deepEqual(Object.keys(templates.component).sort(), ['cli-behaviours-mappings', 'cli-behaviours-settings']);
  assert.deepEqual(Object.keys(templates.index).sort(), [
    'cli-artefacts',
    'cli-batches',
    'cli-behaviours',
    'cli-collection-objects',
    'cli-collections',
    'cli-dead-letters',
    'cli-locator',
    'cli-private-files',
    'cli-watch-hits',
    'cli-watches',
  ]);
  assert.deepEqual(Object.keys(fake.policies()), ['cli-behaviours']);
  assert.deepEqual(fake.aliases('cli-behaviours-000001'), { 'cli-behaviours': { is_write_index: false } });

  // retention from the settings becomes the policy's delete phase (the whole day past it)
  const third = await runCli(['es', 'setup', '--json'], {
    env: { ELASTICSEARCH_URL: url, SANDTRAIL_ELASTICSEARCH_INDEX_PREFIX: 'cli', SANDTRAIL_RETENTION_DAYS: '45' },
  });
  assert.equal(third.code, 0, third.stderr);
  assert.deepEqual((fake.policies()['cli-behaviours'] as { phases: Record<string, unknown> }).phases.delete, {
    min_age: '46d',
    actions: { delete: {} },
  });
});

test('es setup --dry-run prints the plan and needs no cluster; without an Elasticsearch sink it is a usage error', async () => {
  const dry = await runCli(['es', 'setup', '--dry-run', '--json'], { env: { SANDTRAIL_ELASTICSEARCH_REPLICAS: '0' } });
  assert.equal(dry.code, 0, dry.stderr);
  assert.deepEqual(
    JSON.parse(dry.stdout),
    JSON.parse(JSON.stringify(setupPlan({ replicas: 0, shards: 1, refreshInterval: '5s', totalFieldsLimit: 2000, retentionDays: 'off' }))),
  );
  const text = await runCli(['es', 'setup', '--dry-run']);
  assert.match(
    text.stdout,
    /^# component template sandtrail-behaviours-settings\nPUT \/_component_template\/sandtrail-behaviours-settings\n\{/,
  );
  assert.match(text.stdout, /# only when sandtrail-behaviours does not exist\nPUT \/sandtrail-behaviours-000001\n/);
  assert.match(text.stdout, /\nPUT \/_ilm\/policy\/sandtrail-behaviours\n/);

  const usage = await runCli(['es', 'setup', '--sink', 'sqlite:/tmp/x.db']);
  assert.equal(usage.code, 2);
  assert.match(usage.stderr, /es setup needs an Elasticsearch store/);
});

test('es setup against refused credentials or privileges: SINK_AUTH naming what was refused, as JSON under --json', async () => {
  const url = await fake.listen();
  const env = { ELASTICSEARCH_URL: url, ELASTICSEARCH_API_KEY: 'QVBJS0VZOTk5', SANDTRAIL_ELASTICSEARCH_INDEX_PREFIX: 'auth' };
  fake.failRequests({}, { status: 401 }, 5);
  const refused = await runCli(['es', 'setup', '--json'], { env });
  assert.equal(refused.code, 1, refused.stderr);
  const err = (JSON.parse(refused.stdout) as { error: { code: string; message: string } }).error;
  assert.equal(err.code, 'SINK_AUTH');
  assert.match(err.message, /refused the credentials or privileges .*security_exception/);
  assert.doesNotMatch(refused.stdout + refused.stderr, /QVBJS0VZOTk5/);
  fake.clearFaults();

  // credentials good, a privilege missing for one step: the step is named
  fake.failRequests({ method: 'PUT', path: /_ilm\/policy/ }, { status: 403 });
  const step = await runCli(['es', 'setup', '--json'], { env });
  assert.equal(step.code, 1, step.stderr);
  const stepErr = (JSON.parse(step.stdout) as { error: { code: string; message: string } }).error;
  assert.equal(stepErr.code, 'SINK_AUTH');
  assert.match(stepErr.message, /es setup: lifecycle policy auth-behaviours/);
  fake.clearFaults();
});

test('reads of a cluster holding no store under the prefix fail naming the alias (exit 1), as reads of a missing SQLite file do, and create nothing', async () => {
  const url = await fake.listen();
  const env = { SANDTRAIL_ELASTICSEARCH_INDEX_PREFIX: 'nostore', REDIS_URL: '', SANDTRAIL_REDIS_URL: '' };
  const reads = [
    ['query', '--behash', 'x'],
    ['pivot', '--behash', 'x'],
    ['top', 'behash'],
    ['dlq', 'list'],
    ['watch', 'list'],
    ['status'],
    ['dlq', 'replay', '--all'],
    ['serve', '--port', '0'],
  ];
  const failures: string[] = [];
  for (const args of reads) {
    const r = await runCli([...args, '--store', `es:${url}`], { env });
    if (r.code !== 1 || !r.stderr.includes('the alias nostore-behaviours does not exist; run sandtrail es setup or a backfill first'))
      failures.push(`${args.join(' ')}: exit ${r.code}, ${r.stderr.trim()}`);
  }
  assert.deepEqual(failures, []);
  assert.deepEqual(
    fake.indices().filter((i) => i.startsWith('nostore')),
    [],
  );
  // once set up, the same read answers
  assert.equal((await runCli(['es', 'setup', '--store', `es:${url}`], { env })).code, 0);
  const top = await runCli(['top', 'behash', '--store', `es:${url}`], { env });
  assert.equal(top.code, 0, top.stderr);
});
