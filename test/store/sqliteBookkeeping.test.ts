import { join } from 'node:path';
import { openStore } from '../../src/store/index.js';
import { tempDir } from '../support/env.js';
import { bookkeepingConformance } from './bookkeepingConformance.js';

const dir = tempDir();
let n = 0;

bookkeepingConformance('sqlite', async () => {
  const store = openStore(`sqlite:${join(dir, `b${n++}.db`)}`);
  return { sink: store.sink, dlq: store.dlq, batches: store.batches, close: () => store.close() };
});
