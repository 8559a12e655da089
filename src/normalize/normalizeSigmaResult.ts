/**
 * `sigma_analysis_results[]`, whose `match_context` comes in several shapes (spec: the
 * attribute description says a dict `{values: [map, ...]}`, sample payloads show a list of
 * `{values: map}`, and exports also carry bare event maps). Canonical form: always a list of
 * `{values: {string: string}}`, one item per matched event, in input order.
 */
import type { SigmaMatch } from './CanonicalAttributes.js';
import { coerceString, type Coerce } from './coerceScalar.js';
import { entryOf, schemaOf, toStringMap, type EntryFn } from './coerceList.js';
import { isRecord, kindOf, pathOf, type WarningLog } from './WarningLog.js';

/**
 * Folds one match_context item at `path` into `out`:
 * - `{values: {...}}`         → one event
 * - `{values: [{...}, ...]}`  → one event per object
 * - anything else (a map without an object/list `values`) is itself the event map.
 * Keys beside `values` in a wrapper have no place in the canonical form: dropped with a warning.
 */
function addMatchItem(item: Record<string, unknown>, path: string, out: SigmaMatch[], w: WarningLog): void {
  const values = Object.hasOwn(item, 'values') ? item.values : undefined;
  if (isRecord(values)) {
    out.push({ values: toStringMap(values, path, 'values', w) });
  } else if (Array.isArray(values)) {
    const vpath = pathOf(path, 'values');
    for (let i = 0; i < values.length; i++) {
      const m: unknown = values[i];
      if (isRecord(m)) out.push({ values: toStringMap(m, vpath, i, w) });
      else w.addAt('dropped_item', vpath, i, `expected an event object, got ${kindOf(m)}`);
    }
  } else {
    out.push({ values: toStringMap(item, path, undefined, w) });
    return;
  }
  for (const k of Object.keys(item)) {
    if (k !== 'values') w.addAt('dropped_field', path, k, 'match_context items only carry `values`');
  }
}

/** `match_context` in any known shape → list of `{values}`; absent/null stays absent. */
export const coerceMatchContext: Coerce = (v, parent, key, w): SigmaMatch[] | undefined => {
  if (v === null || v === undefined) return undefined;
  const path = pathOf(parent, key);
  const out: SigmaMatch[] = [];
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const it: unknown = v[i];
      if (isRecord(it)) addMatchItem(it, `${path}[${i}]`, out, w);
      else w.addAt('dropped_item', path, i, `expected an object, got ${kindOf(it)}`);
    }
    return out;
  }
  if (isRecord(v)) {
    addMatchItem(v, path, out, w);
    return out;
  }
  w.add('dropped_field', path, `expected a list of {values} objects, got ${kindOf(v)}`);
  return undefined;
};

const str = coerceString;

/** One sigma analysis result; entries may lack any field (kept absent). */
export const normalizeSigmaResult: EntryFn = entryOf(
  schemaOf({
    rule_title: str,
    rule_source: str,
    match_context: coerceMatchContext,
    rule_level: str,
    rule_description: str,
    rule_author: str,
    rule_id: str,
  }),
);
