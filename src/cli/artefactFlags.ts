/**
 * The artefact flags of run, backfill, lookup and fetch: what commander registers, with no import,
 * so building the command tree does not load the artefact stage (artefactChoice.ts reads them).
 */
export interface ArtefactFlags {
  artefacts?: string;
  artefactFilter?: string;
  artefactMaxBytes?: string;
}

/** commander option lines shared by the commands that download artefacts. */
export const ARTEFACT_OPTIONS: readonly [flags: string, what: string][] = [
  ['--artefacts <kinds>', 'download these artefacts of each report that has them: pcap,evtx,memdump,html (or all), into artefacts.dir'],
  ['--artefact-filter <conds>', 'only for reports matching all of verdict=V (malicious: any but CLEAN), tag=T, sandbox=S'],
  ['--artefact-max-bytes <n>', 'size cap of one artefact (default artefacts.maxBytes); bigger ones are refused'],
];
