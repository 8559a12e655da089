import type { Rejection } from './BehaviourDoc.js';
import { isRecord, kindOf } from './WarningLog.js';

/** An API object's identity as found in its envelope, before its type-specific checks. */
export interface RawEnvelope {
  rec: Record<string, unknown>;
  /** JSON path of the object: `$`, or `$.data` when it came wrapped as the API answers. */
  base: string;
  rawId: string;
  attributes: Record<string, unknown> | undefined;
  /** The `{data: ...}` wrapper the object came in, when it came wrapped: what lies beside `data`. */
  wrapper?: Record<string, unknown>;
}

/**
 * Unwraps `{data: {...}}` (the API's answer; a bare object is accepted too), checks `type` when
 * present, that the id is a string and attributes an object. Shared by every object normalizer
 * so each refuses a bad envelope with the same codes and paths.
 */
export function readRawEnvelope(value: unknown, type: string): RawEnvelope | Rejection {
  if (!isRecord(value)) return rejection('not_object', '$', `expected a JSON object, got ${kindOf(value)}`);
  let rec = value;
  let base = '$';
  let wrapper: Record<string, unknown> | undefined;
  if (!Object.hasOwn(rec, 'id') && Object.hasOwn(rec, 'data')) {
    const data = rec.data;
    if (!isRecord(data)) return rejection('not_object', '$.data', `expected data to be an object, got ${kindOf(data)}`);
    wrapper = rec;
    rec = data;
    base = '$.data';
  }
  const t = rec.type;
  if (t !== undefined && t !== type) {
    return rejection(
      'wrong_type',
      `${base}.type`,
      `expected type "${type}", got ${typeof t === 'string' ? JSON.stringify(t.slice(0, 64)) : kindOf(t)}`,
    );
  }
  const rawId = rec.id;
  if (rawId === undefined || rawId === null) return rejection('missing_id', `${base}.id`, 'record has no id');
  if (typeof rawId !== 'string') return rejection('bad_id', `${base}.id`, `id must be a string, got ${kindOf(rawId)}`);
  const attributes = rec.attributes;
  if (attributes !== undefined && !isRecord(attributes)) {
    return rejection('bad_attributes', `${base}.attributes`, `attributes must be an object, got ${kindOf(attributes)}`);
  }
  return { rec, base, rawId, attributes, ...(wrapper ? { wrapper } : {}) };
}

function rejection(code: Rejection['code'], path: string, message: string): Rejection {
  return { code, path, message };
}

/** Message of a caught value; itself never throws (a hostile toString could). */
export function describeError(err: unknown): string {
  try {
    return err instanceof Error ? err.message : String(err);
  } catch {
    return 'unknown error';
  }
}
