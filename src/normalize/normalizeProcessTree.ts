/**
 * `processes_tree`: nodes `{name, process_id, time_offset?, children}`. Canonical nodes always
 * carry `children` (possibly empty); `time_offset` is kept only where the input had it (the
 * spec puts it on child nodes; it is never invented). The walk is bounded by
 * MAX_PROCESS_TREE_DEPTH, so hostile nesting costs at most that many stack frames.
 */
import type { ProcessNode } from './CanonicalAttributes.js';
import { coerceInt, coerceString, type Coerce } from './coerceScalar.js';
import { isRecord, kindOf, pathOf, setOwn, type WarningLog } from './WarningLog.js';

/** Deepest level kept (roots are level 1); children of level-64 nodes are dropped with `depth_limit`. */
export const MAX_PROCESS_TREE_DEPTH = 64;

function isNonEmptyContainer(v: unknown): boolean {
  if (Array.isArray(v)) return v.length > 0;
  return isRecord(v);
}

function normalizeNode(raw: Record<string, unknown>, path: string, depth: number, w: WarningLog): ProcessNode {
  const out: Record<string, unknown> = {};
  let sawChildren = false;
  for (const k of Object.keys(raw)) {
    const v = raw[k];
    let r: unknown;
    switch (k) {
      case 'name':
        r = coerceString(v, path, k, w);
        break;
      case 'process_id':
        // Spec type is string; numeric pids are common, so they are stringified (with a warning).
        r = coerceString(v, path, k, w);
        break;
      case 'time_offset':
        r = coerceInt(v, path, k, w);
        break;
      case 'children':
        sawChildren = true;
        if (depth >= MAX_PROCESS_TREE_DEPTH) {
          if (isNonEmptyContainer(v)) {
            w.addAt('depth_limit', path, k, `process tree deeper than ${MAX_PROCESS_TREE_DEPTH} levels: subtree dropped`);
          }
          r = [];
        } else {
          r = nodeList(v, path, k, depth + 1, w) ?? [];
        }
        break;
      default:
        if (v !== undefined) setOwn(out, k, v);
        continue;
    }
    if (r !== undefined) out[k] = r;
  }
  if (!sawChildren) out.children = [];
  return out as ProcessNode;
}

/** Nodes at `parent`/`key`, all at level `depth`. A lone node object is wrapped in a list. */
function nodeList(v: unknown, parent: string, key: string, depth: number, w: WarningLog): ProcessNode[] | undefined {
  if (Array.isArray(v)) {
    const path = pathOf(parent, key);
    const out: ProcessNode[] = [];
    for (let i = 0; i < v.length; i++) {
      const it: unknown = v[i];
      if (isRecord(it)) out.push(normalizeNode(it, `${path}[${i}]`, depth, w));
      else w.addAt('dropped_item', path, i, `expected a process node object, got ${kindOf(it)}`);
    }
    return out;
  }
  if (v === null || v === undefined) return undefined;
  if (isRecord(v)) {
    const path = pathOf(parent, key);
    w.add('coerced_scalar', path, 'expected a list of process nodes, got a single object: wrapped');
    return [normalizeNode(v, path, depth, w)];
  }
  w.addAt('dropped_field', parent, key, `expected a list of process nodes, got ${kindOf(v)}`);
  return undefined;
}

/** `processes_tree` attribute coercer (roots are level 1). */
export const coerceProcessTree: Coerce = (v, parent, key, w): ProcessNode[] | undefined => nodeList(v, parent, String(key), 1, w);
