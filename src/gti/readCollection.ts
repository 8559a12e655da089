import { once } from 'node:events';
import Assembler from 'stream-json/assembler.js';
import parser from 'stream-json/parser.js';
import { SandtrailError } from '../errors/index.js';

/** What a page says beside its items: where the next page starts (absent on the last one). */
export interface PageInfo {
  /** `meta.cursor`: pass as `cursor=` to get the next page. */
  cursor: string | null;
  /** `links.next`: the next page's URL. */
  next: string | null;
  /** `meta.count` when the API gave it (total items of the collection). */
  count: number | null;
  /** Items seen on this page. */
  items: number;
}

type Token = { name: string; value?: unknown };

/**
 * Reads a JSON:API answer (`{"data": [...] | {...}, "meta": {...}, "links": {...}}`) as a stream:
 * each item of `data` is yielded as soon as it is complete, so a page of 40 reports of several
 * megabytes each never sits whole in memory (one item at a time does). The generator returns the
 * page's cursor and next link. A body that is not such a document, or is cut, throws
 * GTI_BAD_RESPONSE / the body's own error (a cut connection stays GTI_NETWORK, retryable).
 */
export async function* readCollection(body: AsyncIterable<Buffer>, what: string): AsyncGenerator<unknown, PageInfo> {
  const p = parser.asStream({ packValues: true, streamValues: false });
  const ready: unknown[] = [];
  let meta: Record<string, unknown> | null = null;
  let links: Record<string, unknown> | null = null;
  let failure: Error | null = null;
  let level = 0;
  let key: string | null = null;
  let target: 'item' | 'meta' | 'links' | 'other' = 'other';
  let asm: Assembler | null = null;
  let sawData = false;
  let items = 0;

  const bad = (why: string): Error => new SandtrailError('GTI_BAD_RESPONSE', `${what}: ${why}`);
  const finish = (value: unknown): void => {
    if (target === 'item') ready.push(value);
    else if (target === 'meta' && isObject(value)) meta = value;
    else if (target === 'links' && isObject(value)) links = value;
  };
  const onToken = (t: Token): void => {
    if (failure) return;
    if (asm) {
      asm.tapChain(t as never);
      if (asm.done) {
        finish(asm.current);
        asm = null;
      }
      return;
    }
    const opens = t.name === 'startObject' || t.name === 'startArray';
    if (level === 0) {
      if (t.name !== 'startObject') failure = bad('the answer is not a JSON object');
      else level = 1;
      return;
    }
    if (level === 1) {
      if (t.name === 'keyValue') key = String(t.value);
      else if (t.name === 'endObject') level = 0;
      else if (key === 'data' && t.name === 'startArray') {
        sawData = true;
        level = 2;
      } else {
        target = key === 'data' ? 'item' : key === 'meta' ? 'meta' : key === 'links' ? 'links' : 'other';
        if (key === 'data') sawData = true;
        if (opens) startAssembler(t);
        else finish(primitive(t));
      }
      return;
    }
    // level 2: inside the data array
    if (t.name === 'endArray') {
      level = 1;
      return;
    }
    target = 'item';
    if (opens) startAssembler(t);
    else finish(primitive(t));
  };
  const startAssembler = (t: Token): void => {
    asm = new Assembler();
    asm.tapChain(t as never);
  };

  p.on('data', onToken);
  p.on('error', (err: Error) => (failure ??= bad(`invalid JSON: ${err.message}`)));
  const take = function* (): Generator<unknown> {
    while (ready.length > 0) {
      items += 1;
      yield ready.shift();
    }
  };
  for await (const chunk of body) {
    if (failure) throw failure;
    if (p.destroyed) throw bad('the JSON parser stopped');
    // the parser's own error is `failure` (its 'error' listener runs first): never the raw one
    if (!p.write(chunk)) await drained(p);
    if (failure) throw failure;
    yield* take();
  }
  p.end();
  await new Promise<void>((resolve) => {
    if (p.readableEnded) resolve();
    else {
      p.once('end', resolve);
      p.once('error', () => resolve());
      p.resume();
    }
  });
  if (failure) throw failure;
  if (level !== 0 || asm) throw bad('the answer ended before its JSON did');
  if (!sawData) throw bad('the answer has no "data"');
  yield* take();
  const m = meta as Record<string, unknown> | null;
  const l = links as Record<string, unknown> | null;
  return {
    cursor: typeof m?.cursor === 'string' && m.cursor !== '' ? m.cursor : null,
    next: typeof l?.next === 'string' && l.next !== '' ? l.next : null,
    count: typeof m?.count === 'number' ? m.count : null,
    items,
  };
}

/** Resolves on the parser's 'drain', 'error' or 'close', whichever comes first, leaving no listener behind. */
async function drained(p: NodeJS.EventEmitter): Promise<void> {
  const ac = new AbortController();
  const { signal } = ac;
  await Promise.race([once(p, 'drain', { signal }), once(p, 'error', { signal }), once(p, 'close', { signal })]).catch(() => undefined);
  ac.abort();
}

function primitive(t: Token): unknown {
  switch (t.name) {
    case 'stringValue':
      return t.value;
    case 'numberValue':
      return Number(t.value);
    case 'trueValue':
      return true;
    case 'falseValue':
      return false;
    default:
      return null;
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
