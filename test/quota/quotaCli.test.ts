import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'vitest';
import { runCli } from '../support/cli.js';
import { accountApi } from '../support/apiAccounting.js';
import { tempDir, testRedisUrl, uniquePrefix, cleanup } from '../support/env.js';
import { startFakeGti } from '../support/fakeGti.js';

const SECRET = 'k-secret-0123456789';

test('quota replay prints the exact consumption shape and flags malformed lines with exit 3', async () => {
  const file = join(tempDir(), 'ops.jsonl');
  writeFileSync(
    file,
    [
      '{"op":"api","method":"GET","path":"/files/abc","user":"a","group":"g"}',
      '{"op":"api","method":"GET","path":"/api/v3/feeds/file_behaviours/202611210000","user":"a","group":"g"}',
      'not json',
      '{"op":"ui_search","kind":"ioc","user":"b"}',
      '{"op":"graph_create","visibility":"public","items":4,"user":"b","group":"g"}',
    ].join('\n'),
  );
  const r = await runCli(['quota', 'replay', file, '--json']);
  assert.equal(r.code, 3);
  assert.deepEqual(JSON.parse(r.stdout), {
    users: { a: { api_requests: 1 }, b: { searches: 1, api_requests: 4 } },
    groups: { g: { api_requests: 5 } },
  });
  assert.match(r.stderr, /"line":3/);

  // a line far longer than any operation is refused by its number without being held whole; the
  // lines after it, the last one without a newline, still count
  const long = join(tempDir(), 'long.jsonl');
  writeFileSync(
    long,
    `${'{"op":"ui_search","kind":"ioc","user":"c"}'}\n${'x'.repeat(3 * 1024 * 1024)}\n\n{"op":"ui_search","kind":"ioc","user":"c"}`,
  );
  const l = await runCli(['quota', 'replay', long, '--json']);
  assert.equal(l.code, 3, l.stderr);
  assert.deepEqual(JSON.parse(l.stdout), { users: { c: { searches: 2 } }, groups: {} });
  assert.equal(l.stderr, `${JSON.stringify({ line: 2, message: 'longer than 1048576 bytes: not an operation' })}\n`);

  // a directory or a missing file: a usage error naming it, not a raw EISDIR
  const dir = tempDir();
  const onDir = await runCli(['quota', 'replay', dir]);
  assert.equal(onDir.code, 2, onDir.stderr);
  assert.equal(onDir.stderr, `sandtrail: ${dir} is a directory: quota replay reads a file of operations, one JSON line each\n`);
  const missing = await runCli(['quota', 'replay', join(dir, 'none.jsonl')]);
  assert.equal(missing.code, 2, missing.stderr);
  assert.match(missing.stderr, /cannot read .*none\.jsonl: no such file/);
});

test('quota check reads overall_quotas at 0 units (rule 2), shows it beside the ledger, and never prints the key', async () => {
  const fake = await startFakeGti({
    apiKey: SECRET,
    quotas: {
      alice: { api_requests_daily: { user: { allowed: 1000, used: 12 }, group: { allowed: 50000, used: 900, inherited_from: 'soc' } } },
    },
  });
  cleanup(() => fake.close());
  const env = {
    GTI_APIKEY: SECRET,
    GTI_BASE_URL: fake.baseUrl,
    GTI_XTOOL: 'acme.sandtrail.0.1',
    REDIS_URL: await testRedisUrl(),
    SANDTRAIL_QUEUE_PREFIX: uniquePrefix(),
    SANDTRAIL_GTI_GROUP: 'soc',
  };
  accountApi(fake, { redisUrl: env.REDIS_URL, queuePrefix: env.SANDTRAIL_QUEUE_PREFIX });
  const r = await runCli(['quota', 'check', '--user', 'alice', '--json'], { env });
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout) as { quotas: { quota: string; user: { allowed: number; used: number }; ledger: { user: number } }[] };
  assert.deepEqual(out.quotas[0]?.user, { allowed: 1000, used: 12 });
  assert.equal(out.quotas[0]?.ledger.user, 0, 'the quota read itself cost nothing');
  assert.equal(fake.requests[0]?.xTool, 'acme.sandtrail.0.1');
  const ledger = await runCli(['ledger', '--user', 'alice', '--json'], { env });
  const rows = JSON.parse(ledger.stdout) as { operations: Record<string, { calls: number; units: object }> }[];
  assert.deepEqual(rows[0]?.operations['GET /users/{id}/overall_quotas'], { calls: 1, units: {} });

  const bad = await runCli(['quota', 'check', '--user', 'alice'], { env: { ...env, GTI_APIKEY: 'wrong-key-xyz' } });
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /WrongCredentialsError.*GTI_APIKEY/);
  for (const out of [r.stdout, r.stderr, ledger.stdout, bad.stderr]) {
    assert.ok(!out.includes(SECRET) && !out.includes('wrong-key-xyz'), 'no key in any output');
  }
});
