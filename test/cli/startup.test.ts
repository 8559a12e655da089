import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'vitest';
import { runCli } from '../support/cli.js';
import { tempDir, testRedisUrl, uniquePrefix } from '../support/env.js';

/** Runs the CLI with the loaded-packages reporter; returns its exit code, stdout and the packages. */
async function cliWithPackages(
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; stdout: string; packages: string[] }> {
  const r = await runCli(args, { env, nodeArgs: ['--import', './test/support/loadedPackages.mjs'] });
  const line = /^loaded-packages (.*)$/m.exec(r.stderr);
  if (!line) throw new Error(`no package report; stderr: ${r.stderr}`);
  return { code: r.code, stdout: r.stdout, packages: JSON.parse(line[1] as string) as string[] };
}

/** What the pipeline commands and workers use, and the hunting reads do not. */
const PIPELINE = ['bullmq', 'ioredis', 'cli-progress'];

/** Loaded by a process that serves its metrics (http.port) only. */
const METRICS = ['prom-client'];

const HEAVY = [
  '@elastic/elasticsearch',
  '@elastic/transport',
  'undici',
  'apache-arrow',
  'fastify',
  '@bull-board/api',
  '@bull-board/fastify',
  'pino-pretty',
];

test('each command loads what it uses: a SQLite backfill no Elasticsearch client, Fastify, pino-pretty or metrics registry; a hunting read no queue stack', async () => {
  const dir = tempDir();
  const run = await cliWithPackages(['backfill', '--source', 'dir:sample/feed', '--store', `sqlite:${join(dir, 'st.db')}`, '--json'], {
    REDIS_URL: await testRedisUrl(),
    SANDTRAIL_QUEUE_PREFIX: uniquePrefix(),
  });
  assert.equal(run.code, 0, run.stdout);
  const summary = JSON.parse(run.stdout) as { records: { indexed: number } };
  assert.ok(summary.records.indexed > 0, 'the backfill stored records');
  assert.deepEqual(
    run.packages.filter((p) => [...HEAVY, ...METRICS].includes(p)),
    [],
  );
  assert.ok(
    run.packages.includes('better-sqlite3') && run.packages.includes('bullmq'),
    `the reporter sees what is used: ${run.packages.join(' ')}`,
  );

  // what it leaves out still loads when used: the Elasticsearch client for an Elasticsearch store
  // (built when the store opens; the cluster here refuses the connection), pino-pretty for pretty logs
  const es = await cliWithPackages(['dlq', 'list', '--json'], {
    SANDTRAIL_STORE: 'elasticsearch:http://127.0.0.1:1',
    SANDTRAIL_LOG_FORMAT: 'pretty',
  });
  assert.equal(es.code, 1, 'no cluster there');
  assert.ok(es.packages.includes('@elastic/elasticsearch'), `an Elasticsearch store loads the client: ${es.packages.join(' ')}`);
  assert.ok(es.packages.includes('pino-pretty'), 'pretty logs load pino-pretty');

  // a hunter's read of the same store loads only the store: no queue stack (BullMQ, ioredis),
  // metrics or progress bar, which the pipeline commands above do load
  const top = await cliWithPackages(['top', 'behash', '--store', `sqlite:${join(dir, 'st.db')}`, '--json'], {});
  assert.equal(top.code, 0, top.stdout);
  const values = JSON.parse(top.stdout) as { value: string; behaviours: number }[];
  assert.ok(values.length > 0 && (values[0]?.behaviours ?? 0) > 0, `top read the stored behaviours: ${top.stdout}`);
  assert.deepEqual(
    top.packages.filter((p) => [...HEAVY, ...PIPELINE, ...METRICS].includes(p)),
    [],
  );
  assert.ok(top.packages.includes('better-sqlite3'), `the reporter sees the store: ${top.packages.join(' ')}`);
  for (const p of PIPELINE) assert.ok(run.packages.includes(p), `the backfill loads ${p}, so its absence above means something`);
});
