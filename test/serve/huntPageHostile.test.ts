import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'vitest';
import { runBackfillCommand } from '../../src/cli/index.js';
import { createLogger } from '../../src/log/index.js';
import { startReadApi } from '../../src/serve/index.js';
import { openStore, type PivotKind } from '../../src/store/index.js';
import { announceSkip, CHROMIUM, hasChromium, launchChromium } from '../support/chromium.js';
import { cleanup, tempDir, testConfig } from '../support/env.js';

announceSkip('the hunting page over a hostile store');

// Values a report's author controls, each stored for two behaviours: text that would read as
// something else, values a URL path cannot carry, values long enough to widen any page.
const RLO = 'invoice\u202egpj.exe';
const ZWSP = 'abc\u200bdef0123';
const LONG = `b${'0'.repeat(2999)}`;
const HOSTILE: [PivotKind, string][] = [
  ['behash', RLO],
  ['behash', ZWSP],
  ['behash', '..'],
  ['sigma_rule_id', '.'],
  ['behash', LONG],
];
const TITLE = `T${'x'.repeat(99_999)}`;

/** The text the page must show for a value: invisible characters as \uXXXX, cut at 300 characters. */
function shownForm(value: string): string {
  const cut = value.length > 300 ? value.slice(0, 300) : value;
  const escaped = cut.replace(
    // eslint-disable-next-line no-control-regex -- the characters the page marks
    /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  return value.length > 300 ? `${escaped}… ${value.length - 300} more characters` : escaped;
}

test.skipIf(!hasChromium)(
  `the hunting page over a hostile store: every value shown as its escaped form, reachable with the count the store gives, no wider than the window, no CSP violation (headless Chromium ${CHROMIUM})`,
  async () => {
    const dir = tempDir();
    // a feed minute of hostile reports, ingested as any feed is (normalizer, chunks, the real sink)
    const lines = HOSTILE.flatMap(([kind, value], i) =>
      ['a', 'b'].map((x, k) =>
        JSON.stringify({
          type: 'file_behaviour',
          id: `${`${x}${String(i).padStart(2, '0')}`.padEnd(64, String(k))}_Zenbox`,
          attributes: {
            sandbox_name: 'Zenbox',
            analysis_date: 1_795_000_000 + i,
            last_modification_date: 1_795_000_100 + i,
            ...(kind === 'behash' ? { behash: value } : { sigma_analysis_results: [{ rule_id: value, rule_title: TITLE }] }),
          },
        }),
      ),
    );
    mkdirSync(join(dir, 'feed'));
    writeFileSync(join(dir, 'feed', '202611200000.jsonl'), `${lines.join('\n')}\n`);
    const config = await testConfig(dir, { serve: { port: 0 } });
    const run = await runBackfillCommand({ source: `dir:${join(dir, 'feed')}` }, { config, log: createLogger('silent') });
    assert.equal(run.summary.records.indexed, lines.length, JSON.stringify(run.summary));
    const store = openStore(config.store, config);
    cleanup(() => store.close());
    const sigmaFile = JSON.parse(lines[6] ?? '{}') as { id: string };
    const api = await startReadApi({ config, store, log: createLogger('silent') });
    cleanup(() => api.close());

    const browser = await launchChromium();
    cleanup(() => browser.close());
    const width = 1280;
    const page = await browser.newPage({ viewport: { width, height: 900 } });
    const problems: string[] = [];
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) problems.push(`CSP: ${m.text()}`);
    });
    await page.goto(`${api.url}/`);
    const wide = async (what: string): Promise<void> => {
      const w = await page.evaluate('document.documentElement.scrollWidth');
      assert.ok(Number(w) <= width + 20, `${what}: the page is ${w} px wide in a ${width} px window`);
    };
    for (const [kind, value] of HOSTILE) {
      const what = `${kind} ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
      const expected = (await store.hunt.pivotStats(kind, value)).behaviours;
      assert.equal(expected, 2, `${what}: stored twice`);
      await page.evaluate(`location.hash = ${JSON.stringify(`/pivot/${kind}/${encodeURIComponent(value)}`)}`);
      await page.getByTestId('behaviour-count').waitFor();
      assert.equal(await page.getByTestId('behaviour-count').textContent(), String(expected), `${what}: reachable, with the store's count`);
      assert.equal(await page.getByTestId('title-value').textContent(), shownForm(value), `${what}: shown as its escaped form`);
      assert.equal(await page.getByTestId('copy').getAttribute('data-value'), value, `${what}: copied exactly`);
      await wide(what);
      // the way back to the page would be a link: it names the exact value
      await page.evaluate('location.hash = ""');
    }
    // a file roll-up holding a 100,000-character sigma rule title
    await page.evaluate(`location.hash = ${JSON.stringify(`/file/${sigmaFile.id.split('_')[0]}`)}`);
    await page.getByTestId('reports').waitFor();
    await wide('the file roll-up with a 100,000-character rule title');
    assert.deepEqual(problems, []);
  },
);
