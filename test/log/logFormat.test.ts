import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { createLogger, LOG_FORMATS, type LogFormat } from '../../src/log/index.js';
import { runCli } from '../support/cli.js';
import { tempDir, testRedisUrl, uniquePrefix } from '../support/env.js';

type Line = Record<string, unknown>;

/** A logger of `format` writing into an array, as stderr would receive it. */
function capture(format: LogFormat, bindings: Record<string, unknown> = {}, isTTY = false) {
  const out: string[] = [];
  const log = createLogger('info', bindings, { format, destination: { write: (s: string) => void out.push(s), isTTY } });
  return { log, out, text: () => out.join('') };
}

const parse = (chunks: string[]): Line[] => chunks.map((c) => JSON.parse(c) as Line);
// the fields every pipeline log line may be bound to
const BOUND = { stage: 'feed', batch: '202611010000', job: 'feed-202611010000', behaviour: 'abc_sandbox' };

test('json: one pino object per line, with level, msg and every binding at the top level', () => {
  const { log, out } = capture('json', { worker: 'feed' });
  log.child(BOUND).info({ accepted: 3 }, 'batch done');
  log.warn('alone');
  assert.equal(out.length, 2);
  assert.ok(out.every((l) => l.endsWith('\n') && l.indexOf('\n') === l.length - 1));
  const [a, b] = parse(out);
  assert.equal(a?.level, 30);
  assert.equal(a?.msg, 'batch done');
  assert.equal(a?.pid, process.pid);
  assert.equal(typeof a?.time, 'number');
  for (const [k, v] of Object.entries({ ...BOUND, worker: 'feed', accepted: 3 })) assert.equal(a?.[k], v, k);
  assert.equal(b?.level, 40);
  assert.equal(b?.worker, 'feed');
});

test('pretty: one readable line per entry with time, level, message and bound fields; colour only on a TTY', () => {
  const { log, out } = capture('pretty', { worker: 'feed' });
  const child = log.child(BOUND);
  child.info({ accepted: 3 }, 'batch done');
  child.error({ err: new Error('boom') }, 'batch failed');
  assert.equal(out.length, 2);
  for (const l of out) assert.equal(l.split('\n').length, 2, `one line: ${l}`);
  const [a, b] = out as [string, string];
  assert.match(a, /^\[\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\] INFO \(\d+\): batch done /);
  for (const [k, v] of Object.entries({ ...BOUND, worker: 'feed' })) assert.ok(a.includes(`"${k}":"${v}"`), k);
  assert.ok(a.includes('"accepted":3'));
  assert.match(b, /ERROR \(\d+\): batch failed .*"message":"boom"/);
  assert.ok(!out.join('').includes('\u001b['), 'no colour when not a TTY');

  const tty = capture('pretty', {}, true);
  tty.log.info('coloured');
  assert.ok(tty.text().includes('\u001b['), 'colour on a TTY');
});

test('ecs: ECS lines, our own fields (bound or per call) under sandtrail.*, errors as error.*', () => {
  const { log, out } = capture('ecs', { worker: 'feed' });
  const child = log.child(BOUND);
  child.info({ accepted: 3, source: 'api', 'event.action': 'index' }, 'batch done');
  child.warn({ err: 'Redis went away' }, 'retrying');
  child.error({ err: new TypeError('boom') }, 'batch failed');
  const [a, w, e] = parse(out);
  assert.ok(a && w && e);
  assert.match(String(a['@timestamp']), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  assert.equal(a['log.level'], 'info');
  assert.equal(a.message, 'batch done');
  assert.match(String(a['ecs.version']), /^\d+\.\d+\.\d+$/);
  assert.equal(a['process.pid'], process.pid);
  assert.equal(typeof a['host.hostname'], 'string');
  assert.equal(a['service.name'], 'sandtrail');
  for (const [k, v] of Object.entries({ ...BOUND, worker: 'feed', accepted: 3, source: 'api' })) {
    assert.equal(a[`sandtrail.${k}`], v, k);
    // a top-level `source` or `url` would clash with the ECS objects of that name
    assert.ok(!(k in a), `no top-level ${k}`);
  }
  assert.equal(a['event.action'], 'index', 'dotted names are ECS fields and kept');
  for (const k of ['level', 'msg', 'time', 'pid']) assert.ok(!(k in a), k);
  // one of each key: ECS static fields are not repeated by child loggers
  for (const l of out) assert.equal(l.split('"ecs.version"').length, 2);

  assert.equal(w['log.level'], 'warn');
  assert.equal(w['error.message'], 'Redis went away');
  assert.deepEqual(Object.keys(e.error as object).sort(), ['message', 'stack_trace', 'type']);
  assert.equal((e.error as Line).type, 'TypeError');
  assert.equal((e.error as Line).message, 'boom');
});

test("ecs: an ECS logger's bindings() passed to a new logger (the index thread does) are not duplicated or renamed twice", () => {
  const parent = capture('ecs', { worker: 'feed' });
  const bindings = parent.log.child({ stage: 'index' }).bindings();
  const { log, out } = capture('ecs', { ...bindings, thread: 'index' });
  log.info('started');
  const [l] = parse(out);
  assert.equal(l?.['sandtrail.worker'], 'feed');
  assert.equal(l?.['sandtrail.stage'], 'index');
  assert.equal(l?.['sandtrail.thread'], 'index');
  assert.ok(!Object.keys(l ?? {}).some((k) => k.startsWith('sandtrail.sandtrail') || k.startsWith('sandtrail.process')));
  for (const k of ['"process.pid"', '"ecs.version"', '"host.hostname"']) assert.equal(out[0]?.split(k).length, 2, k);
});

test('a secret given in every way never appears in any format', () => {
  const PW = 'secretpw';
  for (const format of LOG_FORMATS) {
    const { log, out, text } = capture(format, { worker: 'feed', redis: `redis://default:${PW}@127.0.0.1:6379` });
    const child = log.child({ stage: 'feed', via: `https://u:${PW}@h/child` });
    child.info({ apiKey: PW, password: PW, token: PW }, 'top-level fields');
    child.info(
      {
        config: {
          gti: { apiKey: PW, baseUrl: 'https://gti' },
          elasticsearch: { password: PW, apiKey: PW },
          http: { token: PW },
          // webhook URLs carry their token in the path
          webhooks: { soc: `https://hooks.example/T0/${PW}` },
        },
        elasticsearch: { password: PW },
      },
      'nested config',
    );
    child.info({ headers: { 'x-apikey': PW, authorization: `Bearer ${PW}`, 'X-Apikey': PW } }, 'headers');
    child.info({ req: { method: 'GET', headers: { 'x-apikey': PW, Authorization: `Basic ${PW}`, cookie: PW } } }, 'request');
    const cause = new Error(`connect ECONNREFUSED redis://:${PW}@10.0.0.1:6379`);
    const err = Object.assign(new Error(`cannot reach https://u:${PW}@h:9200`, { cause }), {
      config: { headers: { 'x-apikey': PW } },
      meta: { meta: { request: { params: { headers: { authorization: `ApiKey ${PW}` } } } } },
    });
    child.error({ err }, 'error object');
    child.error(err);
    child.warn({ err: `failed at https://u:${PW}@h` }, 'error as a string');
    child.warn({ url: new URL(`https://u:${PW}@h/x`) }, `message with https://u:${PW}@h`);
    child.warn('formatted %s', `https://u:${PW}@h`);
    const all = text();
    assert.ok(!all.includes(PW), `${format} leaked:\n${all}`);
    assert.ok(all.includes('[redacted]'), format);
    assert.ok(all.includes('https://u:***@h'), format);
    assert.equal(out.length, 9, format);
    for (const l of out) assert.equal(l.indexOf('\n'), l.length - 1, `${format}: one line per entry`);
  }
});

test('the logged objects themselves are left untouched', () => {
  const { log } = capture('ecs');
  const fields = { apiKey: 'k', nested: { url: 'https://u:p@h' } };
  const err = new Error('https://u:p@h');
  log.error({ ...fields, err }, 'x');
  assert.deepEqual(fields, { apiKey: 'k', nested: { url: 'https://u:p@h' } });
  assert.equal(err.message, 'https://u:p@h');
});

test('logFormat setting: default json, SANDTRAIL_LOG_FORMAT, and an unknown format refused', () => {
  assert.equal(loadConfig().logFormat, 'json');
  assert.equal(loadConfig({ env: { SANDTRAIL_LOG_FORMAT: 'ecs' } }).logFormat, 'ecs');
  assert.equal(loadConfig({ env: { SANDTRAIL_LOG_FORMAT: 'ecs' }, flags: { logFormat: 'pretty' } }).logFormat, 'pretty');
  assert.throws(
    () => loadConfig({ env: { SANDTRAIL_LOG_FORMAT: 'xml' } }),
    (e: { code: string; message: string }) => e.code === 'CONFIG_INVALID' && /logFormat/.test(e.message),
  );
});

test('CLI: --log-format ecs writes ECS lines on stderr; --log-format xml is refused with exit 2', async () => {
  const dir = tempDir();
  const env = { REDIS_URL: await testRedisUrl(), SANDTRAIL_QUEUE_PREFIX: uniquePrefix(), SANDTRAIL_STORE: `sqlite:${join(dir, 's.db')}` };
  const r = await runCli(
    [
      '--log-format',
      'ecs',
      '--log-level',
      'info',
      'backfill',
      '--source',
      'dir:sample/feed',
      '--from',
      '202611010000',
      '--to',
      '202611010000',
      '--json',
    ],
    { env },
  );
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stderr
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Line);
  const done = lines.find((l) => l.message === 'batch done');
  assert.ok(done, r.stderr);
  assert.equal(done['log.level'], 'info');
  assert.ok(done['@timestamp'] && done['ecs.version']);
  assert.equal(done['sandtrail.batch'], '202611010000');
  assert.equal(done['sandtrail.stage'], 'feed');
  for (const l of lines) assert.ok('ecs.version' in l && 'log.level' in l && !('level' in l), JSON.stringify(l));

  const bad = await runCli(['--log-format', 'xml', 'status'], { env });
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /invalid configuration: logFormat: .*'json' \| 'pretty' \| 'ecs'.*'xml'/);
});
