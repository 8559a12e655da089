import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { UnrecoverableError, Worker } from 'bullmq';
import { test } from 'vitest';
import { createRedis, PIPELINE_QUEUES } from '../../src/queue/index.js';
import { cleanup, tempDir } from '../support/env.js';
import { startTestOps } from '../support/testOps.js';
import { announceSkip, artifactPath, CHROMIUM, hasChromium, launchChromium } from '../support/chromium.js';

announceSkip('the dashboard browser test');

const TOKEN = 'dashboard-test-token-0123456789';

test.skipIf(!hasChromium)(`the queue dashboard shows every queue and a failed job in headless Chromium (${CHROMIUM})`, async () => {
  const dir = tempDir();
  const { server, queues, config } = await startTestOps(dir, { token: TOKEN });
  // one job that fails for good, as a chunk that cannot be decoded would
  await queues.index.add(
    'chunk',
    { batch: '202611070000', n: 0, count: 1, payloadKey: 'x', bytes: 1 },
    { jobId: 'idx-202611070000-0', attempts: 1 },
  );
  const connection = createRedis(config.redisUrl as string, { redisCluster: false });
  const worker = new Worker(
    'index',
    async () => {
      throw new UnrecoverableError('CHUNK_CORRUPT: index chunk cannot be decoded (dashboard test)');
    },
    { connection, prefix: config.queuePrefix },
  );
  cleanup(async () => {
    await worker.close();
    connection.disconnect();
  });
  for (let i = 0; i < 100 && (await queues.index.getJobCounts('failed')).failed !== 1; i++) await new Promise((r) => setTimeout(r, 50));
  await worker.close();

  const browser = await launchChromium();
  cleanup(() => browser.close());
  const context = await browser.newContext({
    extraHTTPHeaders: { authorization: `Bearer ${TOKEN}` },
    viewport: { width: 1280, height: 900 },
  });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`${server.url}/queues`, { waitUntil: 'networkidle' });
  for (const name of PIPELINE_QUEUES) await page.getByText(name, { exact: true }).first().waitFor({ timeout: 15_000 });
  await page.goto(`${server.url}/queues/queue/index?status=failed`, { waitUntil: 'networkidle' });
  await page
    .getByText(/CHUNK_CORRUPT/)
    .first()
    .waitFor({ timeout: 15_000 });
  const shot = artifactPath('dashboard-failed-job.png');
  await page.screenshot({ path: shot, fullPage: true });
  assert.ok(existsSync(shot));
  assert.deepEqual(errors, []);
  // read-only by default: no retry button for the failed job
  assert.equal(await page.getByRole('button', { name: /retry/i }).count(), 0);

  // without the token the browser gets nothing
  const anonymous = await browser.newPage();
  const r = await anonymous.goto(`${server.url}/queues`);
  assert.equal(r?.status(), 401);
});
