import assert from 'node:assert/strict';
import { test } from 'vitest';
import { readCollection, type PageInfo } from '../../src/gti/index.js';

/** Feeds `text` in `size`-byte Buffers, calling `onFeed` with the bytes handed over so far. */
async function* chunked(text: string | Buffer, size: number, onFeed: (fed: number) => void = () => undefined): AsyncGenerator<Buffer> {
  const bytes = Buffer.isBuffer(text) ? text : Buffer.from(text);
  for (let off = 0; off < bytes.length; off += size) {
    const chunk = bytes.subarray(off, off + size);
    onFeed(off + chunk.length);
    yield Buffer.from(chunk);
  }
}

/** A page `head` + items joined by commas + `tail`, and the offset just past each item. */
function page(head: string, items: unknown[], tail: string): { body: Buffer; ends: number[] } {
  const parts = [head];
  const ends: number[] = [];
  let offset = Buffer.byteLength(head);
  items.forEach((item, i) => {
    const s = (i > 0 ? ', ' : '') + JSON.stringify(item);
    parts.push(s);
    offset += Buffer.byteLength(s);
    ends.push(offset);
  });
  parts.push(tail);
  return { body: Buffer.from(parts.join('')), ends };
}

/** Every item and the page info of a collection. */
async function readAll(body: AsyncIterable<Buffer>): Promise<{ items: unknown[]; info: PageInfo }> {
  const items: unknown[] = [];
  const gen = readCollection(body, 'test page');
  for (;;) {
    const next = await gen.next();
    if (next.done) return { items, info: next.value };
    items.push(next.value);
  }
}

async function rejectsWith(body: AsyncIterable<Buffer>, code: string, message?: RegExp): Promise<void> {
  await assert.rejects(readAll(body), (err: Error & { code?: string }) => {
    assert.equal(err.code, code);
    assert.match(err.message, /^test page: /);
    if (message) assert.match(err.message, message);
    return true;
  });
}

test('items are yielded one by one from a body fed in 7-byte chunks, with the cursor, next link and count', async () => {
  const items = [
    { type: 'file_behaviour', id: 'a_1', attributes: { tags: ['x', 'y'], n: 1.5, ok: true, none: null, s: 'é ✓ "q"' } },
    { type: 'file_behaviour', id: 'b_2', attributes: { nested: { deep: [1, [2, [3]]] } } },
    { type: 'file_behaviour', id: 'c_3', attributes: {} },
  ];
  const { body, ends } = page(
    '{"meta": {"cursor": "CURSOR==", "count": 17}, "data": [',
    items,
    '], "links": {"self": "http://x/self", "next": "http://x/next?cursor=CURSOR"}}',
  );
  let fed = 0;
  const fedAt: number[] = [];
  const gen = readCollection(
    chunked(body, 7, (n) => (fed = n)),
    'test page',
  );
  const got: unknown[] = [];
  let info: PageInfo | undefined;
  for (;;) {
    const next = await gen.next();
    if (next.done) {
      info = next.value;
      break;
    }
    got.push(next.value);
    fedAt.push(fed);
  }
  assert.deepEqual(got, items);
  assert.deepEqual(info, { cursor: 'CURSOR==', next: 'http://x/next?cursor=CURSOR', count: 17, items: 3 });
  // each item came out once its last byte was in, one at a time, before the body was consumed
  for (let i = 0; i < items.length; i++) {
    assert.ok((fedAt[i] as number) >= (ends[i] as number), `item ${i} cannot come before its last byte`);
    if (i > 0) assert.ok((fedAt[i] as number) > (fedAt[i - 1] as number), `item ${i} came out after item ${i - 1}`);
  }
  assert.ok((fedAt[0] as number) < body.length - 100, `the first item after ${fedAt[0]} of ${body.length} bytes`);
});

test('data as a single object is one item; {data: []} is none; meta and links may come first or be absent', async () => {
  const one = await readAll(
    chunked(JSON.stringify({ links: { self: 'u' }, data: { type: 'private_file', id: 'f', attributes: { size: 3 } } }), 5),
  );
  assert.deepEqual(one.items, [{ type: 'private_file', id: 'f', attributes: { size: 3 } }]);
  assert.deepEqual(one.info, { cursor: null, next: null, count: null, items: 1 });

  const none = await readAll(chunked('{"data": []}', 3));
  assert.deepEqual(none.items, []);
  assert.deepEqual(none.info, { cursor: null, next: null, count: null, items: 0 });

  // an empty cursor is the last page; a count given as 0 is kept
  const last = await readAll(chunked(JSON.stringify({ meta: { cursor: '', count: 0 }, links: { next: '' }, data: [] }), 4));
  assert.deepEqual(last.info, { cursor: null, next: null, count: 0, items: 0 });

  // scalar items are items too
  const scalars = await readAll(chunked('{"data": [1, "two", null, false]}', 2));
  assert.deepEqual(scalars.items, [1, 'two', null, false]);
});

test('not JSON, a body cut mid-item, an answer without data, or not an object: GTI_BAD_RESPONSE', async () => {
  await rejectsWith(chunked('<html><body>502 Bad Gateway</body></html>', 7), 'GTI_BAD_RESPONSE', /invalid JSON|not a JSON object/);
  await rejectsWith(chunked('[{"id": 1}]', 7), 'GTI_BAD_RESPONSE', /not a JSON object/);
  const full = JSON.stringify({
    data: [
      { id: 'a', attributes: { x: 'y' } },
      { id: 'b', attributes: { x: 'zzzzzz' } },
    ],
  });
  await rejectsWith(chunked(full.slice(0, full.indexOf('zzz')), 7), 'GTI_BAD_RESPONSE');
  await rejectsWith(chunked(full.slice(0, -1), 7), 'GTI_BAD_RESPONSE');
  await rejectsWith(chunked('{"meta": {"cursor": "c"}, "links": {}}', 7), 'GTI_BAD_RESPONSE', /no "data"/);
  await rejectsWith(chunked('', 7), 'GTI_BAD_RESPONSE');
});

test('an error of the body itself is passed through unchanged (a cut connection stays GTI_NETWORK, retryable)', async () => {
  const cut = Object.assign(new Error('socket hang up'), { code: 'GTI_NETWORK' });
  async function* body(): AsyncGenerator<Buffer> {
    yield Buffer.from('{"data": [{"id": 1}, {"id"');
    throw cut;
  }
  await assert.rejects(readAll(body()), (err) => err === cut);
});

test('an item nested 3000 levels deep is yielded whole without overflowing the stack', async () => {
  const depth = 3000;
  const text = `{"data": [${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}, {"id": "after"}], "meta": {"cursor": "k"}}`;
  const { items, info } = await readAll(chunked(text, 64));
  assert.equal(items.length, 2);
  let v: unknown = items[0];
  let levels = 0;
  while (typeof v === 'object' && v !== null) {
    v = (v as { a: unknown }).a;
    levels += 1;
  }
  assert.equal(levels, depth);
  assert.equal(v, 1);
  assert.deepEqual(items[1], { id: 'after' });
  assert.deepEqual(info, { cursor: 'k', next: null, count: null, items: 2 });
});

test('a page of 40 items of ~1 MB fed in 64 KB chunks is yielded item by item, each soon after its last byte arrived', async () => {
  const CHUNK = 64 * 1024;
  const items = Array.from({ length: 40 }, (_, i) => ({
    type: 'file_behaviour',
    id: `item-${i}`,
    attributes: { blob: String.fromCharCode(97 + (i % 26)).repeat(1_000_000), n: i },
  }));
  const { body, ends } = page('{"meta":{"cursor":"next-page"},"data":[', items, ']}');
  assert.ok(body.length > 40_000_000);

  let fed = 0;
  const fedAt: number[] = [];
  const gen = readCollection(
    chunked(body, CHUNK, (n) => (fed = n)),
    'test page',
  );
  let seen = 0;
  let info: PageInfo | undefined;
  for (;;) {
    const next = await gen.next();
    if (next.done) {
      info = next.value;
      break;
    }
    const item = next.value as { id: string; attributes: { blob: string; n: number } };
    assert.equal(item.id, `item-${seen}`);
    assert.equal(item.attributes.n, seen);
    assert.equal(item.attributes.blob.length, 1_000_000);
    fedAt.push(fed);
    seen += 1;
  }
  assert.equal(seen, 40);
  assert.deepEqual(info, { cursor: 'next-page', next: null, count: null, items: 40 });
  // the first item arrived after ~1 MB, not after the 40 MB body
  assert.ok((fedAt[0] as number) < 2 * 1024 * 1024, `first item after ${fedAt[0]} bytes`);
  for (let i = 0; i < 40; i++) {
    const at = fedAt[i] as number;
    const end = ends[i] as number;
    assert.ok(at >= end, `item ${i} cannot come before its last byte`);
    assert.ok(at < end + 2 * CHUNK, `item ${i} (ends at ${end}) came out only after ${at} bytes were fed`);
  }
});
