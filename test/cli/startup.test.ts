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

test('a SQLite backfill loads neither the Elasticsearch client, nor Fastify and the dashboard, nor pino-pretty: only what it uses', async () => {
  const dir = tempDir();
  const run = await cliWithPackages(['backfill', '--source', 'dir:sample/feed', '--store', `sqlite:${join(dir, 'st.db')}`, '--json'], {
    REDIS_URL: await testRedisUrl(),
    SANDTRAIL_QUEUE_PREFIX: uniquePrefix(),
  });
  assert.equal(run.code, 0, run.stdout);
  const summary = JSON.parse(run.stdout) as { records: { indexed: number } };
  assert.ok(summary.records.indexed > 0, 'the backfill stored records');
  assert.deepEqual(
    run.packages.filter((p) => HEAVY.includes(p)),
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
});
