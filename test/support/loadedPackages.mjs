// Preloaded with --import: at exit, prints the npm packages the process loaded through the
// CommonJS loader (every CommonJS package, whether required or imported) as one stderr line.
import { createRequire } from 'node:module';

const cache = createRequire(import.meta.url).cache;
process.on('exit', () => {
  const packages = new Set();
  for (const file of Object.keys(cache)) {
    const m = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(file);
    if (m) packages.add(m[1]);
  }
  process.stderr.write(`loaded-packages ${JSON.stringify([...packages].sort())}\n`);
});
