import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'vitest';
import { runBackfillCommand } from '../../src/cli/index.js';
import { createLogger } from '../../src/log/index.js';
import { startReadApi } from '../../src/serve/index.js';
import { openStore } from '../../src/store/index.js';
import { writeFeed } from '../../src/synth/index.js';
import { announceSkip, artifactPath, CHROMIUM, hasChromium, launchChromium } from '../support/chromium.js';
import { cleanup, tempDir, testConfig } from '../support/env.js';

announceSkip('the hunting page browser test');

test.skipIf(!hasChromium)(
  `the hunting page: a behash, one of its behaviours, a shared value, that file's roll-up (headless Chromium ${CHROMIUM})`,
  async () => {
    const dir = tempDir();
    await writeFeed({ out: join(dir, 'feed'), seed: 33, start: '202611090000', minutes: 4, perMinute: 40, malformedRate: 0, bigRate: 0 });
    const config = await testConfig(dir, { serve: { port: 0, apiKeys: 'hunt-page-key-01' } });
    await runBackfillCommand({ source: `dir:${join(dir, 'feed')}` }, { config, log: createLogger('silent') });
    const store = openStore(config.store, config);
    cleanup(() => store.close());
    const api = await startReadApi({ config, store, log: createLogger('silent') });
    cleanup(() => api.close());
    const [hot] = await store.sink.top('behash', 1);
    assert.ok(hot && hot.count > 1);

    const browser = await launchChromium();
    cleanup(() => browser.close());
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    // a Content-Security-Policy violation is reported on the console and as an event in the page
    const violations: string[] = [];
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
    });
    await page.exposeFunction('reportViolation', (v: string) => violations.push(v));
    await page.addInitScript({
      content:
        "document.addEventListener('securitypolicyviolation', (e) => window.reportViolation(e.violatedDirective + ' ' + e.blockedURI));",
    });
    const response = await page.goto(`${api.url}/`);
    const headers = response?.headers() ?? {};
    assert.match(
      headers['content-security-policy'] ?? '',
      /^default-src 'none'; script-src 'sha256-[^']+'; style-src 'sha256-[^']+'; connect-src 'self';.*frame-ancestors 'none'/,
    );
    assert.equal(headers['x-content-type-options'], 'nosniff');
    assert.equal(headers['x-frame-options'], 'DENY');
    assert.equal(headers['referrer-policy'], 'no-referrer');
    await page.fill('#key', 'hunt-page-key-01');
    await page.dispatchEvent('#key', 'change');
    await page.selectOption('#kind', 'behash');
    await page.fill('#value', hot.value);
    await page.click('button');
    await page.getByTestId('behaviour-count').waitFor();
    assert.equal(await page.getByTestId('behaviour-count').textContent(), String(hot.count));

    // a behaviour of the cluster → the values it shares → one of them → its file's roll-up
    await page.getByTestId('behaviour-link').first().click();
    await page.getByTestId('values').waitFor();
    assert.match((await page.getByTestId('title').textContent()) ?? '', /^related to /);
    const sharedValue = page.getByTestId('values').getByTestId('pivot-link').first();
    const value = (await sharedValue.textContent()) ?? '';
    await sharedValue.click();
    await page.getByTestId('behaviour-count').waitFor();
    assert.equal(await page.getByTestId('title-value').textContent(), value);
    await page.getByTestId('file-link').first().click();
    await page.getByTestId('reports').waitFor();
    assert.match((await page.getByTestId('title').textContent()) ?? '', /^file [0-9a-f]{64}$/);
    const shot = artifactPath('hunt-page-file-rollup.png');
    await page.screenshot({ path: shot, fullPage: true });
    assert.ok(existsSync(shot));
    assert.deepEqual(errors, []);
    assert.deepEqual(violations, [], 'the page works under its own Content-Security-Policy');
  },
);
