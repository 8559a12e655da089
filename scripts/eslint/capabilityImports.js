// ESLint rule: an import that crosses into another capability folder of src/ must go through that
// folder's index.ts, its only public surface. Sub-folders of a capability (store/sqlite) belong to it.
import { dirname, relative, resolve, sep } from 'node:path';

const ROOT = resolve(dirname(new URL(import.meta.url).pathname), '..', '..');
const SRC = resolve(ROOT, 'src');

/** `src/<capability>` of a file, or undefined for files outside src/. */
function capabilityOf(file) {
  const rel = relative(SRC, file);
  if (rel.startsWith('..') || rel === '') return undefined;
  const [first, ...rest] = rel.split(sep);
  return rest.length === 0 ? '' : first;
}

export default {
  meta: {
    type: 'problem',
    docs: { description: "cross-capability imports go through the capability's index.ts" },
    messages: { internal: "'{{path}}' reaches inside src/{{cap}}/: import '{{suggest}}' instead" },
    schema: [],
  },
  create(context) {
    const file = resolve(context.filename);
    const from = capabilityOf(file);
    const check = (node) => {
      const spec = node.source?.value;
      if (typeof spec !== 'string' || !spec.startsWith('.')) return;
      const target = resolve(dirname(file), spec).replace(/\.js$/, '.ts');
      const cap = capabilityOf(target);
      if (cap === undefined || cap === '' || cap === from) return;
      if (target === resolve(SRC, cap, 'index.ts')) return;
      const suggest = relative(dirname(file), resolve(SRC, cap, 'index.js'));
      context.report({
        node: node.source,
        messageId: 'internal',
        data: { path: spec, cap, suggest: suggest.startsWith('.') ? suggest : `./${suggest}` },
      });
    };
    return { ImportDeclaration: check, ExportNamedDeclaration: check, ExportAllDeclaration: check, ImportExpression: check };
  },
};
