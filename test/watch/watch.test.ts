import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, test } from 'vitest';
import { errorCode } from '../../src/errors/index.js';
import { createLogger } from '../../src/log/index.js';
import { openStore, type Watch } from '../../src/store/index.js';
import {
  createWatchHook,
  postWebhook,
  redactWebhook,
  redeliverNotification,
  WatchMatcher,
  WatchNotifier,
  WebhookBreaker,
} from '../../src/watch/index.js';
import { cleanup, tempDir } from '../support/env.js';
import { freePort } from '../support/redisServer.js';
import { makeDoc, sinkDocs } from '../store/sinkConformance.js';

const log = createLogger('silent');
const SHA = (c: string): string => c.repeat(64);

/** A loopback receiver answering each request with the next status of `statuses` (the last one repeats). */
async function receiver(statuses: number[], delayMs = 0): Promise<{ url: string; hits: () => number }> {
  let n = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const status = statuses[Math.min(n++, statuses.length - 1)] as number;
      setTimeout(() => res.writeHead(status).end(), delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanup(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits: () => n };
}

function watch(name: string, conditions: Watch['conditions'], notify: Watch['notify'] = {}): Watch {
  return { name, conditions, notify, createdAt: 1 };
}

describe('WatchMatcher', () => {
  const docs = [
    makeDoc(SHA('a'), 'Zenbox', 1000, { behash: 'H1', sigma_analysis_results: [{ rule_id: 'Sig-1' }], tls: [{ ja3: 'A'.repeat(32) }] }),
    makeDoc(SHA('b'), 'CAPE Sandbox', 2000, { files_dropped: [{ path: 'x', sha256: SHA('D') }] }),
  ];
  const metas = sinkDocs(docs).map((d) => d.meta);

  test('matches by every pivot and the sha256, case-insensitively; matched conditions in the watch order; watches by name', async () => {
    const store = {
      list: async (): Promise<Watch[]> => [
        watch('z-last', [{ kind: 'ja3', value: 'a'.repeat(32) }]),
        watch('a-first', [
          { kind: 'sha256', value: SHA('b') },
          { kind: 'sigma_rule_id', value: 'SIG-1' },
          { kind: 'behash', value: 'h1' },
          { kind: 'dropped_sha256', value: SHA('d') },
        ]),
        watch('none', [{ kind: 'ja3s', value: 'f'.repeat(32) }]),
      ],
    };
    const m = await new WatchMatcher(store).match(metas);
    assert.deepEqual(
      m.map((x) => [x.doc.id, x.watch.name, x.matched.map((c) => c.kind)]),
      [
        [docs[0]!.id, 'a-first', ['sigma_rule_id', 'behash']],
        [docs[0]!.id, 'z-last', ['ja3']],
        [docs[1]!.id, 'a-first', ['sha256', 'dropped_sha256']],
      ],
    );
  });

  test('watches are read at most every refreshMs: an added watch is matched once the cache is older (no restart)', async () => {
    let watches: Watch[] = [];
    let reads = 0;
    const store = { list: async (): Promise<Watch[]> => (reads++, watches) };
    const matcher = new WatchMatcher(store, { refreshMs: 80 });
    assert.deepEqual(await matcher.match(metas), []);
    watches = [watch('late', [{ kind: 'behash', value: 'h1' }])];
    assert.deepEqual(await matcher.match(metas), [], 'still the cached (empty) list');
    assert.equal(reads, 1);
    await sleep(100);
    assert.deepEqual(
      (await matcher.match(metas)).map((x) => x.watch.name),
      ['late'],
    );
    assert.equal(reads, 2);
  });
});

describe('webhook delivery', () => {
  test('5xx is retried with backoff until a 2xx; a 4xx fails at once; a timeout fails; messages name the host only', async () => {
    const flaky = await receiver([503, 500, 204]);
    assert.equal(await postWebhook(`${flaky.url}/T/s3cr3t`, '{}', { backoffMs: 10 }), 3);
    assert.equal(flaky.hits(), 3);

    const gone = await receiver([404]);
    const err = await postWebhook(`${gone.url}/T/s3cr3t`, '{}', { backoffMs: 10 }).catch((e: unknown) => e);
    assert.equal(errorCode(err), 'WEBHOOK_FAILED');
    assert.equal((err as Error).message, `webhook ${gone.url}/*** answered 404 (1 try)`);
    assert.equal(gone.hits(), 1);

    const slow = await receiver([200], 500);
    const late = await postWebhook(`${slow.url}/x?token=s3cr3t`, '{}', { attempts: 2, backoffMs: 10, timeoutMs: 100 }).catch(
      (e: unknown) => e,
    );
    assert.equal((late as Error).message, `webhook ${slow.url}/*** timed out after 100 ms (2 tries)`);

    const closed = await freePort();
    const refused = await postWebhook(`http://127.0.0.1:${closed}/s3cr3t`, '{}', { attempts: 1 }).catch((e: unknown) => e);
    assert.equal((refused as Error).message, `webhook http://127.0.0.1:${closed}/*** unreachable (ECONNREFUSED) (1 try)`);
  });

  test('a webhook that keeps failing is skipped for a pause (dead-lettered at once), then tried once, and used again once it answers', async () => {
    const dir = tempDir();
    const store = openStore(`sqlite:${join(dir, 's.db')}`);
    cleanup(() => store.close());
    // hangs past the timeout for the first 4 requests, then answers 204
    let n = 0;
    const server = createServer((req, res) => {
      req.resume();
      if (++n > 4) req.on('end', () => res.writeHead(204).end());
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanup(() => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook/s3cr3t`;
    const w = watch('w', [{ kind: 'behash', value: 'h' }], { webhook: url });
    const hit = (i: number) => ({
      watch: 'w',
      behaviourId: `${SHA('a')}_Sandbox${i}`,
      lastModified: 5,
      sha256: SHA('a'),
      sandbox: `Sandbox${i}`,
      matched: w.conditions,
      at: 9,
    });
    let clock = 0;
    const notifier = new WatchNotifier(store.dlq, log, { attempts: 1, timeoutMs: 150 }, new WebhookBreaker(3, 1000, () => clock));
    for (let i = 0; i < 20; i++) await notifier.notify(w, hit(i));
    // three slow failures open the breaker; the other 17 are dead-lettered without a request
    assert.equal(n, 3);
    assert.equal(notifier.undelivered, 20);
    const dead = await store.dlq.list({ stage: 'watch', limit: 50 });
    assert.equal(dead.length, 20);
    assert.match(dead.map((d) => d.message).join('\n'), /skipped: the webhook failed 3 tries in a row/);
    assert.ok(!JSON.stringify(dead).includes('s3cr3t'));
    // after the pause one notification is tried, alone: the 4th request hangs too, so it stays open
    clock = 1000;
    await Promise.all([notifier.notify(w, hit(20)), notifier.notify(w, hit(21))]);
    assert.equal(n, 4);
    clock = 2000;
    await notifier.notify(w, hit(22));
    await notifier.notify(w, hit(23));
    assert.equal(n, 6, 'the probe was answered: the webhook is used as before');
    assert.equal(notifier.undelivered, 22);

    // notifications under way together: once the breaker opens, none of them retries
    let m = 0;
    const hang = createServer((req) => void (m++, req.resume()));
    await new Promise<void>((resolve) => hang.listen(0, '127.0.0.1', resolve));
    cleanup(() => new Promise<void>((resolve) => (hang.closeAllConnections(), hang.close(() => resolve()))));
    const w2 = watch('w2', w.conditions, { webhook: `http://127.0.0.1:${(hang.address() as AddressInfo).port}/h` });
    // a backoff (1-2 s with its jitter) far longer than the spread of the 8 timeouts, even on a busy machine
    const many = new WatchNotifier(store.dlq, log, { attempts: 4, backoffMs: 2000, timeoutMs: 150 });
    await Promise.all(Array.from({ length: 8 }, (_, i) => many.notify(w2, { ...hit(i), watch: 'w2' })));
    // the breaker opens at the 8th failed try (two notifications' worth): none of the 8 retries (32 tries otherwise)
    assert.equal(m, 8);

    // a receiver down for under a second (connections refused): notifications sent together each
    // get their tries, and every one is delivered once it is back
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const p = (probe.address() as AddressInfo).port;
        probe.close(() => resolve(p));
      });
    });
    const delivered: string[] = [];
    const back = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8').on('data', (c: string) => (body += c));
      req.on('end', () => (delivered.push((JSON.parse(body) as { behaviourId: string }).behaviourId), res.writeHead(204).end()));
    });
    cleanup(() => new Promise<void>((resolve) => (back.closeAllConnections(), back.close(() => resolve()))));
    const w3 = watch('w3', w.conditions, { webhook: `http://127.0.0.1:${port}/h` });
    const brief = new WatchNotifier(store.dlq, log, { attempts: 4, backoffMs: 400, timeoutMs: 2000 });
    const sent = Promise.all(Array.from({ length: 12 }, (_, i) => brief.notify(w3, { ...hit(i), watch: 'w3' })));
    setTimeout(() => back.listen(port, '127.0.0.1'), 700);
    await sent;
    assert.equal(brief.undelivered, 0);
    assert.equal(new Set(delivered).size, 12);
  });

  test('a probe answered with a refusal (404) closes the breaker: the receiver is there, and the next notifications go to it', async () => {
    const dir = tempDir();
    const store = openStore(`sqlite:${join(dir, 's.db')}`);
    cleanup(() => store.close());
    const statuses = [500, 500, 500, 404];
    let n = 0;
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(statuses[n++] ?? 204).end());
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanup(() => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))));
    const w = watch('w', [{ kind: 'behash', value: 'h' }], { webhook: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook` });
    const hit = (i: number) => ({
      watch: 'w',
      behaviourId: `${SHA('b')}_Sandbox${i}`,
      lastModified: 5,
      sha256: SHA('b'),
      sandbox: `Sandbox${i}`,
      matched: w.conditions,
      at: 9,
    });
    let clock = 0;
    const notifier = new WatchNotifier(store.dlq, log, { attempts: 1 }, new WebhookBreaker(3, 1000, () => clock));
    for (let i = 0; i < 4; i++) await notifier.notify(w, hit(i));
    assert.deepEqual([n, notifier.undelivered], [3, 4], 'three 500s open the breaker; the fourth is skipped');
    clock = 1000;
    await notifier.notify(w, hit(4)); // the probe: answered 404, that notification alone is refused
    assert.deepEqual([n, notifier.undelivered], [4, 5]);
    for (let i = 5; i < 8; i++) await notifier.notify(w, hit(i));
    assert.deepEqual([n, notifier.undelivered], [7, 5], 'delivered once the receiver answers 2xx');
  });

  test('a replayed notification goes to the watch as it is now; a webhook still down is skipped after the breaker opens', async () => {
    const ok = await receiver([204]);
    const watches = new Map<string, Watch>([
      ['w', watch('w', [{ kind: 'behash', value: 'h' }], { webhook: 'soc', file: join(tempDir(), 'w.jsonl') })],
    ]);
    const store = { get: (name: string) => Promise.resolve(watches.get(name) ?? null) };
    const raw = JSON.stringify({ watch: 'w', behaviourId: 'b', lastModified: 1, sha256: SHA('a'), sandbox: 'Zenbox', matched: [], at: 2 });
    // the watch names its webhook; this process's configuration has its URL, or says which setting it lacks
    assert.equal(
      await redeliverNotification(store, { raw, path: 'webhook' }),
      `no webhook named "soc" in this process's configuration: set webhooks.soc in its config file or SANDTRAIL_WEBHOOK_SOC=URL (name with - only in a config file)`,
    );
    assert.equal(ok.hits(), 0);
    assert.equal(await redeliverNotification(store, { raw, path: 'webhook' }, { targets: { soc: `${ok.url}/new/s3cr3t` } }), null);
    assert.equal(ok.hits(), 1);
    assert.equal(await redeliverNotification(store, { raw, path: 'file' }), null);
    assert.equal(readFileSync(watches.get('w')!.notify.file as string, 'utf8'), `${raw}\n`);
    assert.match((await redeliverNotification(store, { raw: raw.replace('"w"', '"gone"'), path: 'webhook' }))!, /no longer exists/);
    // a watch of the same name added after the hit is another watch: it is not sent the old one's hits
    watches.set('w2', { ...watch('w2', [{ kind: 'sha256', value: SHA('b') }], { file: join(tempDir(), 'w2.jsonl') }), createdAt: 3 });
    assert.match(
      (await redeliverNotification(store, { raw: raw.replace('"w"', '"w2"'), path: 'file' }))!,
      /the watch "w2" was removed and added again since this hit/,
    );
    assert.equal(existsSync(watches.get('w2')!.notify.file as string), false);

    // a URL kept by a store written before webhooks were named is still delivered to
    const down = await receiver([503]);
    watches.set('w', watch('w', [{ kind: 'behash', value: 'h' }], { webhook: `${down.url}/x` }));
    const breaker = new WebhookBreaker(3, 60_000);
    const reasons: (string | null)[] = [];
    for (let i = 0; i < 10; i++) reasons.push(await redeliverNotification(store, { raw, path: 'webhook' }, { backoffMs: 1 }, breaker));
    // a receiver answering 503 fails fast: the first notification gets all its 4 tries, then the breaker opens
    assert.equal(down.hits(), 4, 'tries stop once the breaker opens');
    assert.match(reasons.at(-1) ?? '', /^skipped: the webhook failed 4 tries in a row/);
  });

  test('redactWebhook keeps scheme and host only', () => {
    assert.equal(redactWebhook('https://hooks.slack.com/services/T0/B0/XYZ'), 'https://hooks.slack.com/***');
    assert.equal(redactWebhook('http://10.0.0.1:8080/'), 'http://10.0.0.1:8080/');
    assert.equal(redactWebhook('http://10.0.0.1:8080/?k=v'), 'http://10.0.0.1:8080/***');
    assert.equal(redactWebhook('not a url'), '***');
  });

  test('an unwritable file is dead-lettered WATCH_FILE_FAILED (stage watch) and does not fail the caller', async () => {
    const dir = tempDir();
    const store = openStore(`sqlite:${join(dir, 's.db')}`);
    try {
      // a regular file where the directory should be
      writeFileSync(join(dir, 'blocker'), '');
      const w = watch('w', [{ kind: 'behash', value: 'h' }], { file: join(dir, 'blocker', 'hits.jsonl') });
      const hit = {
        watch: 'w',
        behaviourId: `${SHA('a')}_Zenbox`,
        lastModified: 5,
        sha256: SHA('a'),
        sandbox: 'Zenbox',
        matched: w.conditions,
        at: 9,
      };
      await new WatchNotifier(store.dlq, log).notify(w, hit);
      const [dead] = await store.dlq.list({ stage: 'watch' });
      assert.equal(dead?.code, 'WATCH_FILE_FAILED');
      assert.equal(dead?.id, `watch:watch-w:${SHA('a')}_Zenbox@5:file`);
      assert.deepEqual(JSON.parse((await store.dlq.get(dead.id))!.raw), hit);
    } finally {
      await store.close();
    }
  });
});

test('the index-stage hook on an in-process store: new documents become hits once, with their file line; stale replays add none', async () => {
  const dir = tempDir();
  const store = openStore(`sqlite:${join(dir, 's.db')}`);
  try {
    const file = join(dir, 'out', 'hits.jsonl');
    await store.watches.add(watch('w', [{ kind: 'behash', value: 'H1' }], { file }));
    const hook = createWatchHook(store, log);
    const docs = sinkDocs([makeDoc(SHA('a'), 'Zenbox', 1000, { behash: 'h1' }), makeDoc(SHA('b'), 'Zenbox', 1000, { behash: 'h2' })]);
    await hook(docs);
    await hook(docs);
    const hits = await store.watches.hits('w');
    assert.deepEqual(
      hits.map((h) => [h.behaviourId, h.lastModified]),
      [[`${SHA('a')}_Zenbox`, 1000]],
    );
    assert.deepEqual(
      readFileSync(file, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as unknown),
      hits,
    );
  } finally {
    await store.close();
  }
});
