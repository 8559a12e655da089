import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'vitest';
import { runCli } from '../support/cli.js';
import { tempDir } from '../support/env.js';
import { startStubApi } from '../support/stubApi.js';
import { makeFakeFile } from '../support/fakeGti.js';

/**
 * An API that misbehaves on a file's behaviours: `loop` answers every page with the same cursor,
 * `mangled` a 200 that is no JSON. Each must cost a bounded number of paid calls.
 */
test('a lookup stops a listing whose cursor repeats, and asks a mangled page once more only: no retry by the job, each call being paid', async () => {
  const loop = makeFakeFile('paging-loop', { behaviours: 1 });
  const mangled = makeFakeFile('paging-mangled', { behaviours: 1 });
  const api = await startStubApi((path) => {
    if (path === `/api/v3/files/${loop.sha256}/behaviours`)
      return { status: 200, body: { data: loop.behaviours, meta: { cursor: 'SAME' } } };
    if (path === `/api/v3/files/${mangled.sha256}/behaviours`)
      return { status: 200, body: '<html>a proxy answered</html>', type: 'text/html' };
    return undefined;
  });
  const env = {
    GTI_APIKEY: 'paging-key-0c1e',
    GTI_BASE_URL: api.baseUrl,
    SANDTRAIL_GTI_BACKOFF_MS: '10',
    SANDTRAIL_LOOKUP_BACKOFF_MS: '10',
    SANDTRAIL_STORE: `sqlite:${join(tempDir(), 's.db')}`,
  };
  const r = await runCli(['lookup', loop.sha256, mangled.sha256, '--json'], { env });
  assert.equal(r.code, 1, r.stderr);
  const summary = JSON.parse(r.stdout) as {
    hashes: { hash: string; outcome: string; indexed: number; error?: string }[];
    api_units: number;
  };
  const [l, m] = summary.hashes;
  assert.equal(l?.outcome, 'failed');
  assert.match(l?.error ?? '', /^GTI_BAD_RESPONSE: .*cursor it gave before/);
  assert.equal(api.asked(`/api/v3/files/${loop.sha256}/behaviours`), 2, 'the second page named the first one’s cursor again');
  assert.equal(m?.outcome, 'failed');
  assert.match(m?.error ?? '', /^GTI_BAD_RESPONSE: /);
  assert.equal(api.asked(`/api/v3/files/${mangled.sha256}/behaviours`), 2, 'asked once more, not 6 × 3 times');
  assert.equal(summary.api_units, 4);
}, 60_000);
