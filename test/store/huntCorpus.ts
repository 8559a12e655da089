/**
 * The corpus of the hunting conformance suite: realistic synthetic reports whose hunting fields
 * are set by hand, so every figure the suite asserts can be counted on paper.
 */
import assert from 'node:assert/strict';
import { normalizeRecord, type BehaviourDoc } from '../../src/normalize/index.js';
import { Rng, generateRecord } from '../../src/synth/index.js';

export const T0 = 1_800_000_000;
export const hex = (pair: string, n: number): string => pair.repeat(n / 2);
export const F1 = hex('f1', 64);
export const F2 = hex('f2', 64);
export const F3 = hex('f3', 64);
export const F4 = hex('f4', 64);
export const F5 = hex('f5', 64);
export const M1 = hex('a5', 32);
export const SHA1_1 = hex('b5', 40);
export const M3 = hex('c5', 32);
export const H1 = hex('a1', 32);
export const H2 = hex('b2', 32);
export const H3 = hex('c3', 32);
export const J1 = hex('d4', 32);
export const J2 = hex('e5', 32);
export const S1 = hex('f6', 32);
export const D1 = hex('0d', 64);
export const G1 = 'Sigma-Rule-1';
export const G2 = 'sigma-rule-2';

/** The hunting fields of one handcrafted report. */
export interface Spec {
  sha: string;
  sandbox: string;
  at: number | null;
  lmd?: number;
  behash: string;
  ja3?: string[];
  ja3s?: string[];
  sigma?: Record<string, unknown>[];
  dropped?: string[];
  verdicts?: unknown[];
  mitre?: string[];
  /** Signature matches: [format, name] pairs. */
  signatures?: [string, string][];
  dns?: { hostname: string; resolved_ips?: string[] }[];
  http?: string[];
  ips?: string[];
  /** IDS alerts' contexts (hosts, URLs and addresses of the alert). */
  ids?: Record<string, unknown>[];
  md5?: string;
  sha1?: string;
}

/**
 * A realistic report (the synthetic generator's, every list and variant it draws) whose hunting
 * fields are then set by hand, normalized by the real normalizer.
 */
export function report(s: Spec): BehaviourDoc {
  const r = generateRecord(new Rng(`hunt:${s.sha}:${s.sandbox}`), {
    big: false,
    lastModificationDate: s.lmd ?? (s.at ?? T0) + 1000,
    identity: { sha256: s.sha, sandboxName: s.sandbox, sandboxId: s.sandbox, analysisDate: s.at ?? T0 },
  });
  const a = r.attributes;
  for (const k of [
    'tls',
    'ja3_digests',
    'files_dropped',
    'sigma_analysis_results',
    'mitre_attack_techniques',
    'signature_matches',
    'verdicts',
  ])
    delete a[k];
  for (const k of ['dns_lookups', 'http_conversations', 'ip_traffic', 'ids_alerts', 'ids_results']) delete a[k];
  if (s.at === null) delete a.analysis_date;
  a.behash = s.behash;
  const tls = (s.ja3 ?? []).map((ja3, i) => ({ ja3: ja3.toUpperCase(), ...(s.ja3s?.[i] ? { ja3s: s.ja3s[i] } : {}), sni: 'x.example' }));
  if (tls.length) a.tls = tls;
  if (s.sigma) a.sigma_analysis_results = s.sigma;
  if (s.dropped) a.files_dropped = s.dropped.map((sha256, i) => ({ path: `C:\\drop${i}.exe`, sha256: sha256.toUpperCase() }));
  if (s.verdicts) a.verdicts = s.verdicts;
  // the reports carry a technique's description; the corpus's second technique has none
  const described: Record<string, string> = { T1055: 'Process Injection' };
  if (s.mitre)
    a.mitre_attack_techniques = s.mitre.map((id) => ({
      id,
      severity: 'HIGH',
      ...(described[id] ? { signature_description: described[id] } : {}),
    }));
  if (s.signatures)
    a.signature_matches = s.signatures.map(([format, name]) => ({ format, name, description: `${name} rule`, rule_src: 'test' }));
  if (s.dns) a.dns_lookups = s.dns;
  if (s.http) a.http_conversations = s.http.map((url) => ({ url, request_method: 'GET' }));
  if (s.ips) a.ip_traffic = s.ips.map((destination_ip) => ({ destination_ip, destination_port: 443 }));
  if (s.ids) a.ids_results = s.ids.map((alert_context, i) => ({ rule_id: `${2001 + i}`, alert_severity: 'high', alert_context }));
  r.context_attributes.file_md5 = s.md5 ?? null;
  r.context_attributes.file_sha1 = s.sha1 ?? null;
  const n = normalizeRecord(r);
  assert.ok(n.ok, JSON.stringify(!n.ok && n.rejection));
  return n.doc;
}

/** Seven reports of five files: values that repeat across sandboxes and files, in mixed case. */
export function corpus(): BehaviourDoc[] {
  return [
    report({
      sha: F1,
      sandbox: 'Zenbox',
      at: T0 + 100,
      behash: H1,
      ja3: [J1],
      ja3s: [S1],
      sigma: [
        { rule_id: G1, rule_level: 'high', rule_title: 'Rule One' },
        { rule_id: G2, rule_level: 'low', rule_title: 'Rule Two' },
      ],
      dropped: [D1],
      verdicts: ['MALWARE', 'TROJAN'],
      mitre: ['T1055', 'T1071'],
      signatures: [
        ['SIG_FORMAT_YARA', 'Loader_Strings'],
        ['SIG_FORMAT_CAPA', 'inject thread'],
      ],
      dns: [{ hostname: 'Evil.Example', resolved_ips: ['203.0.113.5'] }],
      http: ['http://evil.example/gate.php'],
      ips: ['203.0.113.5'],
      md5: M1,
      sha1: SHA1_1,
    }),
    report({
      sha: F1,
      sandbox: 'CAPE Sandbox',
      at: T0 + 200,
      behash: H1.toUpperCase(),
      ja3: [J1],
      sigma: [{ rule_id: 'sigma-rule-1' }],
      verdicts: ['MALWARE'],
      mitre: ['T1055'],
      signatures: [['SIG_FORMAT_YARA', 'Loader_Strings']],
      dns: [{ hostname: 'c2.example' }],
      ips: ['198.51.100.7', 'not-an-ip'],
      ids: [{ hostname: 'IDS.example', url: 'http://ids-url.example/x', dest_ip: '192.0.2.9', src_ip: '10.0.0.5' }],
      md5: M1.toUpperCase(),
      sha1: SHA1_1,
    }),
    report({ sha: F2, sandbox: 'Zenbox', at: T0 + 300, behash: H1, ja3: [J2], sigma: [{ rule_id: G2 }], md5: hex('d5', 32) }),
    report({
      sha: F3,
      sandbox: 'VirusTotal Jujubox',
      at: T0 + 50,
      behash: H2,
      ja3: [J1],
      ja3s: [S1],
      dropped: [D1],
      verdicts: ['CLEAN'],
      md5: 'xyz',
    }),
    report({ sha: F3, sandbox: 'Zenbox', at: T0 + 400, behash: H2, sigma: [{ rule_id: G1 }], verdicts: ['MALWARE', 'MALWARE'], md5: M3 }),
    report({ sha: F4, sandbox: 'CAPE Sandbox', at: null, behash: H1, verdicts: ['RANSOM'] }),
    report({ sha: F5, sandbox: 'Lastline', at: T0 + 500, behash: H3, ja3: [J2] }),
  ];
}
