// Fails when relative imports under src/ and workers/ form a cycle, between files or between the
// capability folders of src/ (type-only imports count: they tie the folders together all the same).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

const files = (d) =>
  readdirSync(d).flatMap((n) => (statSync(join(d, n)).isDirectory() ? files(join(d, n)) : n.endsWith('.ts') ? [resolve(d, n)] : []));
const all = [...files('src'), ...files('workers')];
const SRC = resolve('src');
const capabilityOf = (f) => {
  const rel = relative(SRC, f);
  return rel.startsWith('..') || !rel.includes(sep) ? undefined : rel.split(sep)[0];
};

const graph = new Map();
for (const f of all) {
  const deps = [...readFileSync(f, 'utf8').matchAll(/^(?:import|export)[^'"]*from\s+'(\.[^']+)'/gm)].map((m) =>
    resolve(dirname(f), m[1].replace(/\.js$/, '.ts')),
  );
  graph.set(f, deps);
}

/** The first cycle found in a graph of string nodes, or undefined. */
function findCycle(g) {
  const state = new Map();
  const stack = [];
  let cycle;
  const visit = (n) => {
    if (cycle) return;
    state.set(n, 1);
    stack.push(n);
    for (const d of g.get(n) ?? []) {
      if (state.get(d) === 1) cycle = [...stack.slice(stack.indexOf(d)), d];
      else if (!state.has(d)) visit(d);
      if (cycle) return;
    }
    stack.pop();
    state.set(n, 2);
  };
  for (const n of g.keys()) if (!state.has(n)) visit(n);
  return cycle;
}

const fileCycle = findCycle(graph);
if (fileCycle) {
  console.error(`import cycle: ${fileCycle.map((f) => relative(process.cwd(), f)).join(' -> ')}`);
  process.exit(1);
}
const caps = new Map();
for (const [f, deps] of graph) {
  const from = capabilityOf(f);
  if (!from) continue;
  const set = caps.get(from) ?? new Set();
  for (const d of deps) {
    const to = capabilityOf(d);
    if (to && to !== from) set.add(to);
  }
  caps.set(from, set);
}
const capCycle = findCycle(caps);
if (capCycle) {
  console.error(`capability cycle: ${capCycle.join(' -> ')}`);
  process.exit(1);
}
console.error(`no import cycles in ${all.length} files and ${caps.size} capabilities`);
