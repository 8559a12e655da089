import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'vitest';
import { createProgressReporter, formatEta } from '../../src/cli/index.js';
import type { BackfillProgress } from '../../src/runner/index.js';

/** A terminal-like stream that keeps what is drawn on it. */
function fakeTerminal(): { stream: NodeJS.WriteStream; text(): string } {
  let out = '';
  const w = new Writable({
    write(chunk: Buffer, _enc, done) {
      out += chunk.toString('utf8');
      done();
    },
  });
  Object.assign(w, { isTTY: true, columns: 120, rows: 40, cursorTo: () => true, clearLine: () => true, moveCursor: () => true });
  return { stream: w as unknown as NodeJS.WriteStream, text: () => out };
}

const progress = (over: Partial<BackfillProgress>): BackfillProgress =>
  ({ batchesDone: 0, batchesTotal: 12, chunksDone: 0, chunksKnown: 0, recordsAccepted: 0, elapsedMs: 0, ...over }) as BackfillProgress;

test('an ETA not known yet shows as "-", never as cli-progress\'s "NFs" / "LLs" / " 0s" placeholders', () => {
  // cli-progress's own values before an estimate exists: '0' at start, 'INF' with no movement, 'NULL' when it cannot tell
  const options = { autopaddingChar: '' }; // cli-progress's default (no autopadding)
  for (const unknown of ['0', 'INF', 'NULL', Number.POSITIVE_INFINITY, Number.NaN])
    assert.equal(formatEta(unknown as number, options, 5), '-', String(unknown));
  // a known ETA keeps cli-progress's own format
  assert.equal(formatEta(0, options, 5), '0s');
  assert.equal(formatEta(65, options, 5), '1m5s');
});

test('the first frames of the backfill bar show "ETA -" until progress gives an estimate', () => {
  const term = fakeTerminal();
  const bar = createProgressReporter(term.stream);
  try {
    bar.update(progress({}));
    bar.update(progress({ elapsedMs: 10 }));
    const first = term.text();
    assert.match(first, /ETA -/);
    assert.doesNotMatch(first, /NFs|LLs|ETA\s+0s/);
  } finally {
    bar.done();
  }
});
