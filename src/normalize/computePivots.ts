/**
 * Pivot extraction (DESIGN.md §3). Pure and defensive: it only trusts what it checks, so it
 * can run on canonical attributes from any schema version or on hand-built objects.
 */
import type { Pivots } from './BehaviourDoc.js';
import type { CanonicalAttributes } from './CanonicalAttributes.js';

/** Insertion-ordered set of strings that skips the empty string. */
class OrderedUnique {
  private readonly seen = new Set<string>();
  add(s: string): void {
    if (s !== '') this.seen.add(s);
  }
  toArray(): string[] {
    return [...this.seen];
  }
}

function isSha256Hex(s: string): boolean {
  if (s.length !== 64) return false;
  for (let i = 0; i < 64; i++) {
    const c = s.charCodeAt(i);
    // 0-9 or a-f (callers pass lower-cased strings)
    if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 102))) return false;
  }
  return true;
}

/** Object items of `list`, skipping anything else (attributes may be hand-built). */
function objectsOf(list: unknown): Record<string, unknown>[] {
  if (!Array.isArray(list)) return [];
  return list.filter((x): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x));
}

/**
 * The pivots of a canonical attributes object:
 * - behash: trimmed, lower-cased; null when absent or blank
 * - sigma_rule_ids: `sigma_analysis_results[].rule_id`, trimmed, original case
 * - ja3: `ja3_digests` then `tls[].ja3`, trimmed, lower-cased
 * - ja3s: `tls[].ja3s`, trimmed, lower-cased
 * - dropped_sha256: `files_dropped[].sha256`, trimmed, lower-cased, only valid 64-hex digests
 * Lists are unique, in first-seen order, without empty strings.
 */
export function computePivots(attributes: CanonicalAttributes): Pivots {
  const a = attributes as Record<string, unknown>;

  const rawBehash = a.behash;
  const behash = typeof rawBehash === 'string' ? rawBehash.trim().toLowerCase() : '';

  const sigma = new OrderedUnique();
  for (const r of objectsOf(a.sigma_analysis_results)) {
    if (typeof r.rule_id === 'string') sigma.add(r.rule_id.trim());
  }

  const ja3 = new OrderedUnique();
  const ja3s = new OrderedUnique();
  const digests = a.ja3_digests;
  if (Array.isArray(digests)) {
    for (const d of digests) if (typeof d === 'string') ja3.add(d.trim().toLowerCase());
  }
  for (const t of objectsOf(a.tls)) {
    if (typeof t.ja3 === 'string') ja3.add(t.ja3.trim().toLowerCase());
    if (typeof t.ja3s === 'string') ja3s.add(t.ja3s.trim().toLowerCase());
  }

  const dropped = new OrderedUnique();
  for (const f of objectsOf(a.files_dropped)) {
    if (typeof f.sha256 !== 'string') continue;
    const h = f.sha256.trim().toLowerCase();
    if (isSha256Hex(h)) dropped.add(h);
  }

  return {
    behash: behash === '' ? null : behash,
    sigma_rule_ids: sigma.toArray(),
    ja3: ja3.toArray(),
    ja3s: ja3s.toArray(),
    dropped_sha256: dropped.toArray(),
  };
}
