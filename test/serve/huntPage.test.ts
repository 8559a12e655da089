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
import { runCli } from '../support/cli.js';

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
    // console errors once the key is given (before it, the landing view's read is refused, 401, as it must be)
    const consoleErrors: string[] = [];
    let keyGiven = false;
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
      if (m.type() === 'error' && keyGiven) consoleErrors.push(m.text());
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
      /^default-src 'none'; script-src 'self' 'sha256-[^']+'; style-src 'self' 'sha256-[^']+'; connect-src 'self';.*frame-ancestors 'none'/,
    );
    assert.equal(headers['x-content-type-options'], 'nosniff');
    assert.equal(headers['x-frame-options'], 'DENY');
    assert.equal(headers['referrer-policy'], 'no-referrer');
    // no request leaves the host: the page, its API and its charting library are all served here
    const origin = new URL(api.url).origin;
    const elsewhere: string[] = [];
    page.on('request', (r) => {
      if (!r.url().startsWith(origin) && !r.url().startsWith('data:')) elsewhere.push(r.url());
    });
    await page.getByTestId('error').waitFor();
    assert.match((await page.getByTestId('error').textContent()) ?? '', /AuthenticationRequiredError/);
    keyGiven = true;
    await page.fill('#key', 'hunt-page-key-01');
    await page.dispatchEvent('#key', 'change');

    // the landing view: the store's figures as the CLI gives them, what is new in a window
    await page.getByTestId('store-behaviours').waitFor();
    assert.equal(await page.getByTestId('store-behaviours').textContent(), String(await store.sink.count()));
    const cli = (args: string[]) => runCli([...args, '--json', '--store', config.store]);
    const status = JSON.parse((await cli(['status'])).stdout) as { gaps: string[]; dead_letters: number };
    assert.equal(await page.getByTestId('missing').textContent(), String(status.gaps.length));
    assert.equal(await page.getByTestId('dead-letters').textContent(), String(status.dead_letters));
    assert.equal(await page.getByTestId('done-through').textContent(), '202611090003', 'the last minute the backfill stored');
    // the feed's analyses are weeks old: the 30-day window holds them, the 24-hour one nothing
    assert.equal(await page.getByTestId('new-behash').count(), 0);
    await page.getByTestId('window').filter({ hasText: '30 d' }).click();
    await page.getByTestId('grew-behash').waitFor();
    const top = JSON.parse((await cli(['top', 'behash', '--since', '30d'])).stdout) as { value: string; behaviours: number }[];
    const grew = await page.getByTestId('grew-behash').locator('tr').nth(1).locator('td').allTextContents();
    assert.deepEqual([grew[0], Number(grew[1])], [top[0]?.value, top[0]?.behaviours], 'the growing values are those `top --since` ranks');
    // every value of the feed was first seen in those weeks: the new ones are the growing ones
    assert.equal(await page.getByTestId('new-behash').locator('tr').count(), await page.getByTestId('grew-behash').locator('tr').count());
    const landing = artifactPath('hunt-page-landing.png');
    await page.screenshot({ path: landing, fullPage: true });

    await page.selectOption('#kind', 'behash');
    await page.fill('#value', hot.value);
    await page.click('button');
    await page.getByTestId('behaviour-count').waitFor();
    assert.equal(await page.getByTestId('behaviour-count').textContent(), String(hot.count));
    // the pictures: the timeline's buckets hold every behaviour of the value, drawn by the chart
    const timeline = page.getByTestId('timeline');
    await timeline.locator('canvas').waitFor();
    const total = Number(await timeline.getAttribute('data-total')) + Number(await timeline.getAttribute('data-undated'));
    assert.equal(total, hot.count, 'the timeline sums to the behaviours');
    const stats = await store.hunt.pivotStats('behash', hot.value);
    assert.equal(await page.getByTestId('sandboxes').locator('meter').count(), stats.sandboxes.length);
    assert.equal(await page.getByTestId('verdicts').locator('meter').count(), stats.verdicts.length);
    // what its behaviours carry with it, as the store counts it
    const carried = await store.hunt.cooccurring('behash', hot.value);
    const firstKind = carried[0]?.kind ?? 'ja3';
    await page.getByTestId(`cooccurring-${firstKind}`).waitFor();
    const shown = await page.getByTestId(`cooccurring-${firstKind}`).locator('tr').first().locator('td').allTextContents();
    assert.deepEqual([shown[0], Number(shown[2])], [carried[0]?.value, carried[0]?.behaviours]);
    const pivotShot = artifactPath('hunt-page-pivot.png');
    await page.screenshot({ path: pivotShot, fullPage: true });

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
    // techniques with their names from the reports, signature matches with their formats
    const techniques = await page
      .locator('h2', { hasText: 'MITRE ATT&CK techniques' })
      .locator('xpath=following-sibling::table[1]')
      .textContent();
    assert.match(techniques ?? '', /T\d{4}(\.\d{3})? \S/, 'a technique with its name');
    const fileSha = ((await page.getByTestId('title').textContent()) ?? '').replace(/^file /, '');
    const rollup = await store.hunt.fileRollup(fileSha);
    assert.equal(
      rollup?.signatures.length ? (await page.getByTestId('signatures').locator('tr').count()) - 1 : 0,
      rollup?.signatures.length ?? 0,
      'every signature match listed',
    );
    const shot = artifactPath('hunt-page-file-rollup.png');
    await page.screenshot({ path: shot, fullPage: true });
    assert.ok(existsSync(shot));
    assert.deepEqual(errors, []);
    assert.deepEqual(elsewhere, [], 'no request leaves the host');
    assert.deepEqual(consoleErrors, [], 'no console error once the key is given');
    assert.deepEqual(violations, [], 'the page works under its own Content-Security-Policy');
  },
);
