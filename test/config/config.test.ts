import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'vitest';
import { envSettings, loadConfig, unknownEnvNames } from '../../src/config/index.js';
import { runCli } from '../support/cli.js';
import { tempDir } from '../support/env.js';

const dir = tempDir();
const file = join(dir, 'config.json');
writeFileSync(file, JSON.stringify({ sink: 'sqlite:/from/file.db', queuePrefix: 'file', index: { chunkMaxDocs: 11, highWaterChunks: 7 } }));

test('precedence is flags > env > file > defaults, per setting', () => {
  const c = loadConfig({
    file,
    env: { SANDTRAIL_QUEUE_PREFIX: 'env', SANDTRAIL_INDEX_CHUNK_MAX_DOCS: '22', REDIS_URL: 'redis://127.0.0.1:1' },
    flags: { queuePrefix: 'flag' },
  });
  assert.equal(c.queuePrefix, 'flag');
  assert.equal(c.index.chunkMaxDocs, 22);
  assert.equal(c.index.highWaterChunks, 7);
  assert.equal(c.store, 'sqlite:/from/file.db', 'the former key sink in a file still works');
  assert.equal(c.redisUrl, 'redis://127.0.0.1:1');
  assert.equal(c.feed.maxLineBytes, 32 * 1024 * 1024);
});

test("a command's own defaults sit under the file, the environment and the flags", () => {
  const levels = join(dir, 'levels.json');
  writeFileSync(levels, JSON.stringify({ logLevel: 'debug' }));
  assert.equal(loadConfig({ defaults: { logLevel: 'warn' } }).logLevel, 'warn');
  assert.equal(loadConfig({ file: levels, defaults: { logLevel: 'warn' } }).logLevel, 'debug');
  assert.equal(loadConfig({ file: levels, env: { SANDTRAIL_LOG_LEVEL: 'error' }, defaults: { logLevel: 'warn' } }).logLevel, 'error');
  const loud = join(dir, 'loud.json');
  writeFileSync(loud, JSON.stringify({ logLevel: 'loud' }));
  assert.throws(
    () => loadConfig({ file: loud, defaults: { logLevel: 'warn' } }),
    (e: { code: string; message: string }) => e.code === 'CONFIG_INVALID' && /logLevel/.test(e.message),
  );
});

test('a config file that is not one JSON object is CONFIG_INVALID saying what it holds', () => {
  const cases: [string, string][] = [
    ['"str"', 'a string'],
    ['null', 'null'],
    ['42', 'a number'],
    ['[]', 'an array'],
  ];
  for (const [text, what] of cases) {
    const f = join(dir, `not-object-${what.replace(/\W/g, '')}.json`);
    writeFileSync(f, text);
    assert.throws(
      () => loadConfig({ file: f }),
      (e: { code: string; message: string }) =>
        e.code === 'CONFIG_INVALID' && e.message.includes(`holds ${what}: it must be one JSON object`),
      text,
    );
  }
});

test('the result is deeply frozen', () => {
  const c = loadConfig();
  assert.ok(Object.isFrozen(c) && Object.isFrozen(c.index));
  assert.throws(() => {
    (c.index as { chunkMaxDocs: number }).chunkMaxDocs = 1;
  });
});

test('unknown keys and bad values are rejected with CONFIG_INVALID naming the setting', () => {
  const bad = join(dir, 'bad.json');
  writeFileSync(bad, JSON.stringify({ index: { chunkMaxDoc: 1 } }));
  assert.throws(
    () => loadConfig({ file: bad }),
    (e: { code: string; message: string }) => e.code === 'CONFIG_INVALID' && /chunkMaxDoc/.test(e.message),
  );
  assert.throws(
    () => loadConfig({ env: { SANDTRAIL_INDEX_CHUNK_MAX_DOCS: 'many' } }),
    (e: { code: string; message: string }) => e.code === 'CONFIG_INVALID' && /SANDTRAIL_INDEX_CHUNK_MAX_DOCS/.test(e.message),
  );
  assert.throws(
    () => loadConfig({ flags: { queuePrefix: 'has:colon' } }),
    (e: { code: string }) => e.code === 'CONFIG_INVALID',
  );
});

test('numbers in variables are decimal; every bad variable and setting is named at once; a config file may start with a BOM', () => {
  for (const raw of [' ', '0x10', '1e3', '12abc', 'Infinity']) {
    assert.throws(
      () => loadConfig({ env: { SANDTRAIL_HTTP_PORT: raw } }),
      (e: { code: string; message: string }) =>
        e.code === 'CONFIG_INVALID' && e.message.includes(`SANDTRAIL_HTTP_PORT must be a decimal number, got "${raw}"`),
      JSON.stringify(raw),
    );
  }
  assert.equal(loadConfig({ env: { SANDTRAIL_HTTP_PORT: ' 9464 ' } }).http.port, 9464);
  const bom = join(dir, 'bom.json');
  writeFileSync(bom, `\uFEFF${JSON.stringify({ queuePrefix: 'bom', index: { chunkMaxDoc: 1 } })}`);
  assert.throws(
    () =>
      loadConfig({
        file: bom,
        env: { SANDTRAIL_FEED_CONCURRENCY: 'x', SANDTRAIL_INDEX_CONCURRENCY: 'y', SANDTRAIL_LOG_LEVEL: 'loud' },
      }),
    (e: { code: string; message: string }) =>
      e.code === 'CONFIG_INVALID' &&
      ['SANDTRAIL_FEED_CONCURRENCY', 'SANDTRAIL_INDEX_CONCURRENCY', 'logLevel', 'chunkMaxDoc'].every((n) => e.message.includes(n)),
  );
  writeFileSync(bom, `\uFEFF${JSON.stringify({ queuePrefix: 'bom' })}`);
  assert.equal(loadConfig({ file: bom }).queuePrefix, 'bom');
});

test('every setting has an environment variable with its unit in the name', () => {
  const names = envSettings().map((s) => s.env);
  for (const n of [
    'SANDTRAIL_REDIS_URL',
    'SANDTRAIL_STORE',
    'SANDTRAIL_FEED_MAX_LINE_BYTES',
    'SANDTRAIL_WORKER_LOCK_DURATION_MS',
    'SANDTRAIL_INDEX_BACKOFF_MS',
  ]) {
    assert.ok(names.includes(n), n);
  }
});

test('Elasticsearch settings: the conventional variables, SANDTRAIL_* over them, flags over both', () => {
  const env = {
    ELASTICSEARCH_URL: 'https://es.example:9200',
    ELASTICSEARCH_API_KEY: 'aWQ6a2V5',
    ELASTICSEARCH_CA_FILE: '/certs/ca.pem',
    KIBANA_URL: 'https://kibana.example',
    SANDTRAIL_ELASTICSEARCH_FLUSH_BYTES: '1048576',
    SANDTRAIL_ELASTICSEARCH_SETUP: 'manual',
  };
  const c = loadConfig({ file, env });
  assert.equal(c.store, 'es:https://es.example:9200');
  assert.equal(c.elasticsearch.apiKey, 'aWQ6a2V5');
  assert.equal(c.elasticsearch.caFile, '/certs/ca.pem');
  assert.equal(c.elasticsearch.flushBytes, 1048576);
  assert.equal(c.elasticsearch.setup, 'manual');
  assert.equal(c.elasticsearch.indexPrefix, 'sandtrail');
  assert.equal(c.kibana.url, 'https://kibana.example');
  assert.equal(loadConfig({ env: { ...env, SANDTRAIL_SINK: 'sqlite:/x.db' } }).store, 'sqlite:/x.db');
  assert.equal(loadConfig({ env: { ...env, SANDTRAIL_SINK: 'sqlite:/x.db', SANDTRAIL_STORE: 'sqlite:/s.db' } }).store, 'sqlite:/s.db');
  assert.equal(loadConfig({ env, flags: { sink: 'sqlite:/y.db' } }).store, 'sqlite:/y.db');
  assert.equal(loadConfig({ env, flags: { store: 'sqlite:/z.db', sink: 'sqlite:/y.db' } }).store, 'sqlite:/z.db');
  assert.equal(
    loadConfig({ env: { SANDTRAIL_ELASTICSEARCH_API_KEY: 'b3RoZXI=', ELASTICSEARCH_API_KEY: 'aWQ6a2V5' } }).elasticsearch.apiKey,
    'b3RoZXI=',
  );
});

test('Elasticsearch settings are validated: index prefix, unknown keys, enums', () => {
  assert.throws(() => loadConfig({ env: { SANDTRAIL_ELASTICSEARCH_INDEX_PREFIX: 'Bad*Prefix' } }), /elasticsearch\.indexPrefix/);
  assert.throws(() => loadConfig({ flags: { elasticsearch: { shardz: 2 } } as never }), /elasticsearch: Unrecognized key/);
  assert.throws(() => loadConfig({ env: { SANDTRAIL_ELASTICSEARCH_COMPRESSION: 'zstd' } }), /elasticsearch\.compression/);
  assert.throws(() => loadConfig({ env: { SANDTRAIL_ELASTICSEARCH_REFRESH_INTERVAL: 'soon' } }), /elasticsearch\.refreshInterval/);
});

test('retention days and the shard size are validated, each bad value named with the forms accepted', () => {
  const invalid = (input: Parameters<typeof loadConfig>[0], pattern: RegExp): void =>
    assert.throws(
      () => loadConfig(input),
      (e: { code: string; message: string }) => e.code === 'CONFIG_INVALID' && pattern.test(e.message),
    );
  for (const days of ['0', '-3', 'soon', '2.5', '36501']) {
    invalid({ env: { SANDTRAIL_RETENTION_DAYS: days } }, /retention\.days: a whole number of days from 1 to 36500, or off/);
  }
  invalid({ flags: { retention: { days: 0 } } }, /retention\.days: a whole number of days from 1 to 36500, or off/);
  invalid({ env: { SANDTRAIL_RETENTION_BOOKKEEPING_DAYS: '-1' } }, /retention\.bookkeepingDays: a whole number of days/);
  for (const size of ['30', '30 gb', 'gb', '30GB', '-1gb']) {
    invalid(
      { env: { SANDTRAIL_ELASTICSEARCH_MAX_PRIMARY_SHARD_SIZE: size } },
      /elasticsearch\.maxPrimaryShardSize: a size with its unit, e.g. 30gb or 500mb/,
    );
  }
  assert.equal(loadConfig({ env: { SANDTRAIL_RETENTION_DAYS: '30' } }).retention.days, 30);
  assert.equal(loadConfig({ env: { SANDTRAIL_RETENTION_DAYS: 'off' } }).retention.days, 'off');
  assert.equal(loadConfig({}).retention.days, 'off');
  assert.equal(loadConfig({ env: { SANDTRAIL_RETENTION_DAYS: '7' } }).retention.bookkeepingDays, undefined);
  assert.equal(loadConfig({ env: { SANDTRAIL_ELASTICSEARCH_MAX_PRIMARY_SHARD_SIZE: '500mb' } }).elasticsearch.maxPrimaryShardSize, '500mb');
});

test('Redis Cluster: a list of URLs means a cluster, the queue prefix becomes a hash tag; a cluster needs a URL; every listed URL is checked', () => {
  const listed = loadConfig({ env: { REDIS_URL: 'redis://u:p@10.0.0.1:7000, redis://u:p@10.0.0.2:7001' } });
  assert.equal(listed.redisCluster, true);
  assert.equal(listed.queuePrefix, '{sandtrail}');
  const one = loadConfig({ env: { REDIS_URL: 'rediss://10.0.0.1:7000', SANDTRAIL_REDIS_CLUSTER: 'true', SANDTRAIL_QUEUE_PREFIX: 'p1' } });
  assert.equal(one.queuePrefix, '{p1}');
  // a prefix already in braces is kept as given
  assert.equal(loadConfig({ flags: { redisUrl: 'redis://a:1', redisCluster: true, queuePrefix: '{p2}' } }).queuePrefix, '{p2}');
  // a single Redis keeps its prefix as it was (its keys are where earlier versions wrote them)
  const single = loadConfig({ env: { REDIS_URL: 'redis://10.0.0.1:6379' } });
  assert.deepEqual([single.redisCluster, single.queuePrefix], [false, 'sandtrail']);
  assert.throws(
    () => loadConfig({ env: { SANDTRAIL_REDIS_CLUSTER: 'true' } }),
    (e: Error & { code?: string }) => e.code === 'CONFIG_INVALID' && /a Redis Cluster needs redisUrl/.test(e.message),
  );
  assert.throws(
    () => loadConfig({ env: { REDIS_URL: 'redis://10.0.0.1:7000,http://10.0.0.2:7001' } }),
    (e: Error & { code?: string }) => e.code === 'CONFIG_INVALID' && /redisUrl/.test(e.message),
  );
  // a password's unencoded # / ? ends the authority early: refused, with the fix, and no part of it quoted
  for (const url of ['redis://:Pw@x#TopSecretTail@127.0.0.1:6394', 'redis://u:a/SecretTail@h:1', 'redis://u:a?SecretTail@h:1']) {
    assert.throws(
      () => loadConfig({ env: { REDIS_URL: url } }),
      (e: Error & { code?: string }) =>
        e.code === 'CONFIG_INVALID' && /percent-encoded: %23 %2F %3F/.test(e.message) && !e.message.includes('SecretTail'),
      url,
    );
  }
  assert.equal(loadConfig({ env: { REDIS_URL: 'redis://u:p%23w@h:1/2' } }).redisUrl, 'redis://u:p%23w@h:1/2');
  assert.equal(loadConfig({ env: { REDIS_URL: 'redis://u:p@w@h:1' } }).redisUrl, 'redis://u:p@w@h:1', 'an @ in a password reads as one');
});

test('a SANDTRAIL_* variable sandtrail does not read is named, with the setting it is closest to; tools’ own prefixes are left alone', async () => {
  assert.deepEqual(
    unknownEnvNames({
      SANDTRAIL_STOR: 'sqlite:x.db',
      SANDTRAIL_LOG_LEVL: 'debug',
      SANDTRAIL_WHATEVER_ELSE_ENTIRELY: '1',
      SANDTRAIL_STORE: 'sqlite:y.db',
      SANDTRAIL_SINK: 'sqlite:z.db',
      SANDTRAIL_CONFIG: 'c.json',
      SANDTRAIL_TEST_REDIS_URL: 'redis://x',
      SANDTRAIL_WEBHOOK_SOC: 'https://hooks.example/x',
      REDIS_URL: 'redis://y',
      PATH: '/bin',
    }),
    [
      { name: 'SANDTRAIL_LOG_LEVL', closest: 'SANDTRAIL_LOG_LEVEL' },
      { name: 'SANDTRAIL_STOR', closest: 'SANDTRAIL_STORE' },
      { name: 'SANDTRAIL_WHATEVER_ELSE_ENTIRELY' },
    ],
  );
  const r = await runCli(['top', 'behash', '--store', `sqlite:${join(tempDir(), 'none.db')}`], { env: { SANDTRAIL_STOR: 'sqlite:x.db' } });
  assert.equal(r.code, 1);
  assert.match(r.stderr, /SANDTRAIL_STOR is not a variable sandtrail reads: ignored \(did you mean SANDTRAIL_STORE\?\)/);
});

test('webhooks by name: one variable per webhook over the config file; a bad URL is refused without being quoted', () => {
  const withHooks = join(dir, 'hooks.json');
  writeFileSync(withHooks, JSON.stringify({ webhooks: { soc: 'https://file.example/T/s3cr3t', 'pager-1': 'http://pager.example/p' } }));
  const c = loadConfig({
    file: withHooks,
    env: {
      SANDTRAIL_WEBHOOK_SOC: 'https://env.example/T/s3cr3t',
      SANDTRAIL_WEBHOOK_SOC_TEAM: 'https://env.example/team',
      SANDTRAIL_WEBHOOK_X: '',
    },
  });
  assert.deepEqual(c.webhooks, {
    soc: 'https://env.example/T/s3cr3t',
    'pager-1': 'http://pager.example/p',
    soc_team: 'https://env.example/team',
  });
  assert.deepEqual(loadConfig({}).webhooks, {});
  assert.ok(envSettings().some((s) => s.env === 'SANDTRAIL_WEBHOOK_<NAME>' && s.kind === 'map'));
  for (const [env, why] of [
    [{ SANDTRAIL_WEBHOOK_SOC: 'ftp://hooks.example/s3cr3t' }, /webhooks\.soc: an http:\/\/ or https:\/\/ URL without user:password@/],
    [{ SANDTRAIL_WEBHOOK_SOC: 'https://u:s3cr3t@hooks.example/' }, /webhooks\.soc: an http:\/\/ or https:\/\/ URL/],
  ] as const) {
    const err = (() => {
      try {
        loadConfig({ env });
      } catch (e) {
        return e as Error;
      }
      return undefined;
    })();
    assert.match(err?.message ?? '', why);
    assert.doesNotMatch(err?.message ?? '', /s3cr3t/);
  }
  const badName = join(dir, 'bad-hook-name.json');
  writeFileSync(badName, JSON.stringify({ webhooks: { 'Has Space': 'https://hooks.example/' } }));
  assert.throws(() => loadConfig({ file: badName }), /a webhook name is lower-case letters, digits, _ and -/);
});

test('an Elasticsearch index prefix that would nest under another prefix is refused', () => {
  for (const prefix of ['acme-behaviours-eu', 'acme-behaviours']) {
    assert.throws(
      () => loadConfig({ env: { SANDTRAIL_ELASTICSEARCH_INDEX_PREFIX: prefix } }),
      /elasticsearch\.indexPrefix: must not hold "-behaviours-" or end in "-behaviours"/,
      prefix,
    );
  }
  for (const prefix of ['acme', 'acme-eu', 'behaviours', 'acme-behaviours.x', 'acme-behavioursx']) {
    assert.equal(loadConfig({ env: { SANDTRAIL_ELASTICSEARCH_INDEX_PREFIX: prefix } }).elasticsearch.indexPrefix, prefix);
  }
});
