import { SandtrailError } from '../errors/index.js';

/** Artefacts a sandbox report can have: the capture, the Windows event log, the memory dump, the HTML report. */
export const ARTEFACT_KINDS = ['pcap', 'evtx', 'memdump', 'html'] as const;
export type ArtefactKind = (typeof ARTEFACT_KINDS)[number];

/** The attribute saying a report has the artefact. */
export const HAS_FLAG: Readonly<Record<ArtefactKind, string>> = {
  pcap: 'has_pcap',
  evtx: 'has_evtx',
  memdump: 'has_memdump',
  html: 'has_html_report',
};

/** The feed line's `context_attributes` key holding the artefact's link (valid while the batch is in the feed). */
export const CONTEXT_KEY: Readonly<Record<ArtefactKind, string>> = { pcap: 'pcap', evtx: 'evtx', memdump: 'memdump', html: 'html_report' };

/** File name extension of a stored artefact. */
export const EXTENSION: Readonly<Record<ArtefactKind, string>> = { pcap: 'pcap', evtx: 'evtx', memdump: 'dmp', html: 'html' };

/** Whether a string names an artefact kind (job data is checked, not trusted). */
export function isArtefactKind(k: string): k is ArtefactKind {
  return (ARTEFACT_KINDS as readonly string[]).includes(k);
}

/** Parses `--artefacts pcap,evtx,...` (also `all`); unknown kinds are a usage error. */
export function parseArtefactKinds(spec: string | undefined): ArtefactKind[] {
  if (spec === undefined || spec.trim() === '') return [];
  const out = new Set<ArtefactKind>();
  for (const raw of spec.split(',')) {
    const k = raw.trim().toLowerCase();
    if (k === '') continue;
    if (k === 'all') ARTEFACT_KINDS.forEach((a) => out.add(a));
    else if (isArtefactKind(k)) out.add(k);
    else throw new SandtrailError('USAGE', `--artefacts: unknown kind "${raw.trim()}" (expected ${ARTEFACT_KINDS.join(', ')} or all)`);
  }
  return [...out];
}
