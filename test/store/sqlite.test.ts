import { join } from 'node:path';
import { openStore } from '../../src/store/index.js';
import { tempDir } from '../support/env.js';
import { sinkConformance } from './sinkConformance.js';

const dir = tempDir();
let n = 0;

sinkConformance('sqlite', async () => {
  const store = openStore(`sqlite:${join(dir, `s${n++}.db`)}`);
  return { sink: store.sink, close: () => store.close() };
});
