import { SandtrailError } from '../errors/index.js';

/** One condition of `--artefact-filter`: a report attribute that must hold a value. */
interface Condition {
  key: 'verdict' | 'tag' | 'sandbox';
  value: string;
}

const KEYS = ['verdict', 'tag', 'sandbox'] as const;
const BENIGN = new Set(['clean', 'unknown', 'undetected', 'harmless']);

/**
 * `--artefact-filter verdict=malicious,tag=ransomware,sandbox=Zenbox`: artefacts are downloaded
 * only for reports meeting every condition (values compared case-insensitively; `verdict` looks in
 * `attributes.verdicts`, where `malicious` matches any verdict but CLEAN/UNKNOWN; `tag` in
 * `attributes.tags`; `sandbox` at the sandbox name). A key given twice matches either value.
 */
export function parseArtefactFilter(spec: string | undefined): (doc: FilterableDoc) => boolean {
  if (spec === undefined || spec.trim() === '') return () => true;
  const conditions: Condition[] = [];
  for (const part of spec.split(',')) {
    if (part.trim() === '') continue;
    const eq = part.indexOf('=');
    const key = part.slice(0, eq).trim().toLowerCase();
    const value = part
      .slice(eq + 1)
      .trim()
      .toLowerCase();
    if (eq < 0 || !(KEYS as readonly string[]).includes(key) || value === '')
      throw new SandtrailError('USAGE', `--artefact-filter: "${part.trim()}" is not one of ${KEYS.map((k) => `${k}=VALUE`).join(', ')}`);
    conditions.push({ key: key as Condition['key'], value });
  }
  const byKey = new Map<Condition['key'], Set<string>>();
  for (const c of conditions) byKey.set(c.key, (byKey.get(c.key) ?? new Set()).add(c.value));
  return (doc) => {
    for (const [key, values] of byKey) {
      const have = valuesOf(doc, key);
      if (!have.some((v) => values.has(v))) return false;
    }
    return true;
  };
}

/** What a filter looks at in a normalized report. */
export interface FilterableDoc {
  sandbox_name: string;
  attributes: Record<string, unknown>;
}

function valuesOf(doc: FilterableDoc, key: Condition['key']): string[] {
  if (key === 'sandbox') return [doc.sandbox_name.toLowerCase()];
  const list = doc.attributes[key === 'verdict' ? 'verdicts' : 'tags'];
  const values = Array.isArray(list) ? list.filter((v): v is string => typeof v === 'string').map((v) => v.toLowerCase()) : [];
  // `malicious` stands for any verdict but the benign ones (sandboxes name the family instead)
  if (key === 'verdict' && values.some((v) => !BENIGN.has(v))) values.push('malicious');
  return values;
}
