// Fails when relative imports under src/ and workers/ form a cycle.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

const files = (d) =>
  readdirSync(d).flatMap((n) => (statSync(join(d, n)).isDirectory() ? files(join(d, n)) : n.endsWith('.ts') ? [resolve(d, n)] : []));
const all = [...files('src'), ...files('workers')];
const graph = new Map();
for (const f of all) {
  const deps = [...readFileSync(f, 'utf8').matchAll(/^(?:import|export)[^'"]*from\s+'(\.[^']+)'/gm)]
    .filter((m) => !/^import type|^export type/.test(m[0]))
    .map((m) => resolve(dirname(f), m[1].replace(/\.js$/, '.ts')));
  graph.set(f, deps);
}
const state = new Map();
const stack = [];
let cycle;
const visit = (f) => {
  if (cycle) return;
  state.set(f, 1);
  stack.push(f);
  for (const d of graph.get(f) ?? []) {
    if (state.get(d) === 1) cycle = [...stack.slice(stack.indexOf(d)), d];
    else if (!state.has(d)) visit(d);
    if (cycle) return;
  }
  stack.pop();
  state.set(f, 2);
};
for (const f of all) if (!state.has(f)) visit(f);
if (cycle) {
  console.error(`import cycle: ${cycle.map((f) => f.replace(process.cwd() + '/', '')).join(' -> ')}`);
  process.exit(1);
}
console.error(`no import cycles in ${all.length} files`);
