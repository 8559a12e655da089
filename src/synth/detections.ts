import type { Attrs } from './hostActivity.js';
import type { RecordContext } from './RecordContext.js';
import { commandLine, registryKey, userPath } from './values.js';
import { detectionVocab } from './detectionVocab.js';
import { vocab } from './vocab.js';

/**
 * Verdicts, tags, IDS alerts, sigma results, signature matches and MITRE techniques, with the
 * documented variants: `ids_results` without `rule_category`, alert contexts missing keys, sigma
 * `match_context` as list or dict, sparse sigma entries, and signature `authors` as list or dict.
 */
export function detections(ctx: RecordContext, out: Attrs): void {
  const { rng } = ctx;
  const clean = rng.chance(0.12);
  if (clean) {
    out.verdicts = ['CLEAN'];
    out.verdict_confidence = rng.range(40, 90);
    return;
  }
  if (rng.chance(0.75)) {
    const v = new Set<string>(['MALWARE']);
    for (let i = rng.skewedInt(0, 3); i > 0; i--) v.add(rng.pick(vocab.verdicts.slice(1, -1)));
    out.verdicts = [...v];
    out.verdict_confidence = rng.range(50, 100);
  }
  if (rng.chance(0.8)) out.tags = [...new Set(Array.from({ length: rng.range(1, 6) }, () => rng.pick(vocab.tags)))];

  const nIds = ctx.hosts.length > 0 ? rng.skewedInt(0, ctx.scale > 1 ? 25 : 6) : 0;
  if (nIds > 0) {
    // One report uses one spelling throughout: the sample payloads' `ids_results` lack rule_category.
    const asResults = rng.chance(ctx.rates.idsResults);
    ctx.marks.add(asResults ? 'ids_results' : 'ids_alerts');
    out[asResults ? 'ids_results' : 'ids_alerts'] = Array.from({ length: nIds }, () => idsAlert(ctx, asResults));
  }

  const nSigma = rng.skewedInt(0, ctx.scale > 1 ? 10 : 3);
  if (nSigma > 0) out.sigma_analysis_results = Array.from({ length: nSigma }, () => sigmaResult(ctx));

  const nSig = rng.skewedInt(0, 5);
  if (nSig > 0) out.signature_matches = Array.from({ length: nSig }, () => signatureMatch(ctx));

  const nMitre = rng.skewedInt(0, 7);
  if (nMitre > 0) {
    const seen = new Set<string>();
    const techniques: Attrs[] = [];
    for (let i = 0; i < nMitre; i++) {
      const [id, desc] = rng.pick(detectionVocab.mitre);
      if (seen.has(id)) continue;
      seen.add(id);
      techniques.push({ id, signature_description: desc, severity: rng.pick(detectionVocab.mitreSeverities) });
    }
    out.mitre_attack_techniques = techniques;
  }
}

const CONTEXT_KEYS = ['dest_port', 'src_port', 'hostname', 'url', 'protocol', 'src_ip'] as const;

function idsAlert(ctx: RecordContext, asResults: boolean): Attrs {
  const { rng } = ctx;
  const rule = rng.pick(detectionVocab.idsRules);
  const host = rng.pick(ctx.hosts);
  const http = rng.chance(0.5);
  const context: Attrs = {
    dest_ip: ctx.ips.length > 0 ? rng.pick(ctx.ips) : '8.8.8.8',
    dest_port: http ? 80 : rng.pick(vocab.ports),
    protocol: rng.chance(0.9) ? 'TCP' : 'UDP',
    src_ip: `192.168.0.${rng.range(2, 254)}`,
    src_port: rng.range(49152, 65535),
  };
  if (http) {
    context.hostname = host;
    context.url = `/${rng.pick(['gate.php', 'index.php', 'api/v1/report', ''])}`;
  }
  if (rng.chance(ctx.rates.alertContextMissingKeys)) {
    // The sample payloads omit some keys, ports most often; always drop at least one port.
    ctx.marks.add('alert_context_missing_keys');
    delete context[rng.chance(0.5) ? 'dest_port' : 'src_port'];
    for (const k of CONTEXT_KEYS) if (rng.chance(0.25)) delete context[k];
  }
  const alert: Attrs = { alert_context: context, alert_severity: rng.pick(detectionVocab.severities) };
  if (!asResults) alert.rule_category = rule.category;
  alert.rule_id = String(rng.pick([2000000, 2010000, 2020000, 2030000, 2840000, 2850000]) + rng.int(9999));
  alert.rule_msg = rule.msg;
  alert.rule_source = rule.source;
  return alert;
}

function sigmaResult(ctx: RecordContext): Attrs {
  const { rng } = ctx;
  // Rule ids map to fixed titles so a rule_id pivot returns entries that agree with each other.
  const idx = rng.skewedIndex(ctx.pools.sigmaRuleIds.length);
  const rule = detectionVocab.sigmaRules[idx % detectionVocab.sigmaRules.length]!;
  const events: Array<{ values: Record<string, string> }> = [];
  for (let i = rng.range(1, ctx.scale > 1 ? 12 : 2); i > 0; i--) events.push({ values: sysmonEvent(ctx) });
  const dict = rng.chance(ctx.rates.sigmaMatchContextDict);
  ctx.marks.add(dict ? 'sigma_match_context_dict' : 'sigma_match_context_list');
  const matchContext = dict ? { values: events.map((e) => e.values) } : events;
  const level = rng.pick(detectionVocab.sigmaLevels);
  if (rng.chance(ctx.rates.sigmaSparse)) {
    ctx.marks.add('sigma_sparse');
    return { rule_id: ctx.pools.sigmaRuleIds[idx], rule_level: level, match_context: matchContext };
  }
  return {
    rule_title: rule.title,
    rule_source: rule.source,
    match_context: matchContext,
    rule_level: level,
    rule_description: `Detects ${rule.title.toLowerCase()}`,
    rule_author: rule.author,
    rule_id: ctx.pools.sigmaRuleIds[idx],
  };
}

/** The fields of one matched Sysmon event, as sigma match contexts show them. */
function sysmonEvent(ctx: RecordContext): Record<string, string> {
  const { rng } = ctx;
  const image = rng.chance(0.5) ? ctx.samplePath : `C:\\Windows\\System32\\${rng.pick(vocab.exes)}`;
  const x = rng.next();
  if (x < 0.5)
    return {
      EventID: '1',
      Image: image,
      CommandLine: commandLine(ctx),
      ParentImage: ctx.samplePath,
      User: `DESKTOP-${rng.hex(7).toUpperCase()}\\${ctx.user}`,
    };
  if (x < 0.8) return { EventID: '11', Image: image, TargetFilename: userPath(ctx) };
  return {
    EventID: '13',
    EventType: 'SetValue',
    Image: image,
    TargetObject: registryKey(rng),
    Details: rng.chance(0.5) ? 'DWORD (0x00000001)' : userPath(ctx),
  };
}

function signatureMatch(ctx: RecordContext): Attrs {
  const { rng } = ctx;
  const authors = Array.from({ length: rng.range(1, 3) }, () => rng.pick(detectionVocab.sigAuthors));
  let a: unknown = authors;
  if (rng.chance(ctx.rates.authorsDict)) {
    ctx.marks.add('authors_dict');
    // The spec types authors as a dictionary; index keys or a single named key both occur here.
    a = rng.chance(0.8) ? Object.fromEntries(authors.map((v, i) => [String(i), v])) : { author: authors[0] };
  } else {
    ctx.marks.add('authors_list');
  }
  const name = rng.pick(detectionVocab.sigNames);
  return {
    format: rng.pick(detectionVocab.sigFormats),
    authors: a,
    rule_src: rng.pick(detectionVocab.sigSources),
    name,
    description: `Detects ${name.replace(/_/g, ' ')}`,
  };
}
