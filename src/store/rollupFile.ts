import type { BehaviourDoc } from '../normalize/index.js';
import { contactedOf, objects } from './contacted.js';
import { compareText, type FileRollup, type SeenValue } from './HuntReader.js';
import { pivotKey } from './Sink.js';
import { hexDigest, verdictsOf } from '../wire/index.js';

const text = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined);

/** Values of one list of the rollup, each with the sandboxes that saw it. */
class Seen {
  private readonly by = new Map<string, Set<string>>();
  add(value: string | undefined, sandbox: string): void {
    if (value === undefined || value === '') return;
    let s = this.by.get(value);
    if (!s) this.by.set(value, (s = new Set()));
    s.add(sandbox);
  }
  /** By value, each with its sandboxes sorted. */
  list(): SeenValue[] {
    return [...this.by.entries()]
      .sort(([a], [b]) => compareText(a, b))
      .map(([value, s]) => ({ value, sandboxes: [...s].sort(compareText) }));
  }
}

/**
 * Every report of one file merged into what a hunter reads first: the reports (by id), then each
 * indicator with the sandboxes that saw it. Both backends build it here from the stored documents
 * so their answers cannot drift apart. Pivot-like values take their lookup form (`pivotKey`:
 * trimmed, lower-case) so they can be pasted into a pivot query; MITRE ids keep their case.
 */
export function rollupFile(sha256: string, docs: readonly BehaviourDoc[]): FileRollup {
  const sorted = [...docs].sort((a, b) => compareText(a.id, b.id));
  const sigma = new Seen();
  const sigmaInfo = new Map<string, { level: string | null; title: string | null }>();
  const ja3 = new Seen();
  const ja3s = new Seen();
  const dropped = new Seen();
  const mitre = new Seen();
  const mitreNames = new Map<string, string>();
  const signatures = new Seen();
  const signatureInfo = new Map<string, { name: string; format: string | null; description: string | null }>();
  const hosts = new Seen();
  const ips = new Seen();
  let md5: string | null = null;
  let sha1: string | null = null;
  for (const d of sorted) {
    const box = d.sandbox_name;
    const a = (d.attributes ?? {}) as Record<string, unknown>;
    const ctx = (d.context_attributes ?? {}) as Record<string, unknown>;
    md5 ??= hexDigest(ctx.file_md5, 32);
    sha1 ??= hexDigest(ctx.file_sha1, 40);
    for (const r of objects(a.sigma_analysis_results)) {
      const id = text(r.rule_id);
      if (id === undefined) continue;
      const key = pivotKey(id);
      sigma.add(key, box);
      // the first report that names the rule's level or title gives it (reports by id)
      const info = sigmaInfo.get(key) ?? { level: null, title: null };
      info.level ??= text(r.rule_level) ?? null;
      info.title ??= text(r.rule_title) ?? null;
      sigmaInfo.set(key, info);
    }
    const p = d.pivots;
    for (const v of p?.ja3 ?? []) ja3.add(pivotKey(v), box);
    for (const v of p?.ja3s ?? []) ja3s.add(pivotKey(v), box);
    for (const v of p?.dropped_sha256 ?? []) dropped.add(pivotKey(v), box);
    for (const t of objects(a.mitre_attack_techniques)) {
      const id = text(t.id);
      mitre.add(id, box);
      // the reports carry each technique's description: the first report naming it gives it
      const name = text(t.signature_description);
      if (id !== undefined && name !== undefined && !mitreNames.has(id)) mitreNames.set(id, name);
    }
    for (const m of objects(a.signature_matches)) {
      const name = text(m.name);
      if (name === undefined) continue;
      const format =
        text(m.format)
          ?.replace(/^SIG_FORMAT_/, '')
          .toLowerCase() ?? null;
      // a rule is its name within its format (a YARA and a Sigma rule may share a name)
      const key = `${format ?? 'unknown'}:${name}`;
      signatures.add(key, box);
      if (!signatureInfo.has(key)) signatureInfo.set(key, { name, format, description: text(m.description) ?? null });
    }
    const net = contactedOf(a);
    for (const h of net.hosts) hosts.add(h, box);
    for (const ip of net.ips) ips.add(ip, box);
  }
  return {
    sha256,
    md5,
    sha1,
    reports: sorted.map((d) => ({
      id: d.id,
      sandbox_name: d.sandbox_name,
      verdicts: verdictsOf(d.attributes),
      behash: d.pivots?.behash ?? null,
      analysis_date: d.analysis_date ?? null,
    })),
    sigma: sigma.list().map((s) => ({ ...s, ...(sigmaInfo.get(s.value) ?? { level: null, title: null }) })),
    ja3: ja3.list(),
    ja3s: ja3s.list(),
    dropped_sha256: dropped.list(),
    mitre_techniques: mitre.list().map((t) => ({ ...t, name: mitreNames.get(t.value) ?? null })),
    signatures: signatures.list().map(({ value, sandboxes }) => ({
      ...(signatureInfo.get(value) as { name: string; format: string | null; description: string | null }),
      sandboxes,
    })),
    hosts: hosts.list(),
    ips: ips.list(),
  };
}

/** Which stored hash a file hash is, by its length; undefined when it is none of them. */
export function fileHashKind(hash: string): { kind: 'sha256' | 'md5' | 'sha1'; value: string } | undefined {
  const h = hash.trim();
  const value = hexDigest(h, 64) ?? hexDigest(h, 40) ?? hexDigest(h, 32);
  if (value === null) return undefined;
  return { kind: value.length === 64 ? 'sha256' : value.length === 40 ? 'sha1' : 'md5', value };
}
