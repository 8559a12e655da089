import { createHash } from 'node:crypto';
import type { FakeFile } from './fileCatalog.js';

/** MITRE ATT&CK names of the techniques the synthetic generator uses. */
const TECHNIQUE_NAMES: Record<string, string> = {
  T1055: 'Process Injection',
  'T1059.001': 'PowerShell',
  'T1059.003': 'Windows Command Shell',
  'T1547.001': 'Registry Run Keys / Startup Folder',
  'T1053.005': 'Scheduled Task',
  T1497: 'Virtualization/Sandbox Evasion',
  T1082: 'System Information Discovery',
  T1012: 'Query Registry',
  T1490: 'Inhibit System Recovery',
  T1486: 'Data Encrypted for Impact',
  'T1071.001': 'Web Protocols',
  T1105: 'Ingress Tool Transfer',
  T1027: 'Obfuscated Files or Information',
  'T1562.001': 'Disable or Modify Tools',
  T1057: 'Process Discovery',
  T1016: 'System Network Configuration Discovery',
};

/** Techniques listed when a behaviour has no `mitre_attack_techniques`. */
export const DEFAULT_TECHNIQUES = ['T1055', 'T1082'];

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The distinct technique ids of a behaviour (`attributes.mitre_attack_techniques[].id`), or the defaults. */
export function techniqueIdsOf(behaviour: Record<string, unknown>): string[] {
  const attrs = isObject(behaviour.attributes) ? behaviour.attributes : {};
  const list = Array.isArray(attrs.mitre_attack_techniques) ? (attrs.mitre_attack_techniques as unknown[]) : [];
  const ids = [...new Set(list.flatMap((t) => (isObject(t) && typeof t.id === 'string' ? [t.id] : [])))];
  return ids.length > 0 ? ids : DEFAULT_TECHNIQUES;
}

/** An attack_technique object as the API returns it. */
export function attackTechnique(id: string, baseUrl: string): Record<string, unknown> {
  const h = createHash('md5').update(id).digest('hex');
  const name = TECHNIQUE_NAMES[id] ?? `Technique ${id}`;
  return {
    type: 'attack_technique',
    id,
    attributes: {
      name,
      description: `Adversaries may use ${name.toLowerCase()} (${id}) to reach their objectives.`,
      link: `https://attack.mitre.org/techniques/${id.replace('.', '/')}/`,
      stix_id: `attack-pattern--${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`,
      revoked: false,
      creation_date: 1_527_776_400,
      last_modification_date: 1_713_830_400,
    },
    links: { self: `${baseUrl}/attack_techniques/${id}` },
  };
}

/** The public file object (`/file_behaviours/{id}/file`): `file.file`, or attributes derived from the hashes. */
export function fileObject(file: FakeFile, baseUrl: string): Record<string, unknown> {
  const n = (i: number): number => parseInt(file.sha256.slice(i, i + 4), 16);
  const privateSize = file.private?.size;
  const exif = file.private?.exiftool;
  const typeDescription = isObject(exif) && typeof exif.FileType === 'string' ? exif.FileType : 'Win32 EXE';
  const malicious = n(4) % 50;
  const attributes = file.file ?? {
    sha256: file.sha256,
    sha1: file.sha1,
    md5: file.md5,
    size: typeof privateSize === 'number' ? privateSize : 2_000 + n(0) * 37,
    type_description: typeDescription,
    names: [`${file.sha256.slice(0, 12)}.bin`],
    last_analysis_stats: {
      malicious,
      suspicious: 0,
      undetected: 70 - malicious,
      harmless: 0,
      timeout: 0,
      'confirmed-timeout': 0,
      'type-unsupported': 2,
      failure: 0,
    },
  };
  return { type: 'file', id: file.sha256, attributes, links: { self: `${baseUrl}/files/${file.sha256}` } };
}
