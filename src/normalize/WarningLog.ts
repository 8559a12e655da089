/**
 * Per-record warning collector plus the small path/type helpers every coercer needs.
 * Internal to the normalizer (not re-exported).
 */
import type { NormalizeWarning, WarningCode } from './BehaviourDoc.js';

/**
 * Warnings kept per record. A hostile record (a million non-string list items) would otherwise
 * allocate a million warnings; past the cap we only count, and add one `warnings_truncated`.
 */
export const MAX_WARNINGS = 200;

/** Collects warnings for one record, bounded by MAX_WARNINGS. */
export class WarningLog {
  private readonly list: NormalizeWarning[] = [];
  private suppressed = 0;

  /** Records a warning (or only counts it once the cap is reached). */
  add(code: WarningCode, path: string, message: string): void {
    if (this.list.length < MAX_WARNINGS) this.list.push({ code, path, message });
    else this.suppressed++;
  }

  /** Like `add`, but joins the path only when the warning is actually kept. */
  addAt(code: WarningCode, parent: string, key: string | number, message: string): void {
    if (this.list.length < MAX_WARNINGS) this.list.push({ code, path: pathOf(parent, key), message });
    else this.suppressed++;
  }

  /** The warnings, with a trailing `warnings_truncated` entry when some were suppressed. */
  finish(): NormalizeWarning[] {
    if (this.suppressed > 0) {
      this.list.push({
        code: 'warnings_truncated',
        path: '$',
        message: `${this.suppressed} further warnings suppressed (cap ${MAX_WARNINGS} per record)`,
      });
      this.suppressed = 0;
    }
    return this.list;
  }
}

// Compiled once: the normalizer is on the hot path (no per-record regex construction).
const IDENT_RE = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/**
 * JSON path of `key` under `parent`: `$.a.b`, `$.a[3]`, or `$.a["odd key"]` when the key is
 * not an identifier. Only called when a warning is about to be recorded.
 */
export function pathOf(parent: string, key: string | number): string {
  if (typeof key === 'number') return `${parent}[${key}]`;
  return IDENT_RE.test(key) ? `${parent}.${key}` : `${parent}[${JSON.stringify(key)}]`;
}

/** Short type description for messages; never embeds the value itself (it may be huge or a Symbol). */
export function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

/** True for a non-null, non-array object (a JSON object). */
export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Sets an own property even when the key is `__proto__`: a plain assignment would replace the
 * object's prototype instead (prototype pollution of our own output), and the key would vanish
 * from the serialized document.
 */
export function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') {
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  } else {
    target[key] = value;
  }
}
