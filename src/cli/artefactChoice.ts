import { parseArtefactFilter, parseArtefactKinds } from '../artefacts/index.js';
import { SandtrailError } from '../errors/index.js';
import type { ArtefactChoice } from '../queue/index.js';
import type { ArtefactFlags } from './artefactFlags.js';

/** Validated artefact choice of a command (undefined when --artefacts is not given). */
export function artefactChoiceOf(o: ArtefactFlags): ArtefactChoice | undefined {
  const kinds = parseArtefactKinds(o.artefacts);
  if (kinds.length === 0) {
    if (o.artefactFilter || o.artefactMaxBytes)
      throw new SandtrailError('USAGE', '--artefact-filter and --artefact-max-bytes need --artefacts');
    return undefined;
  }
  parseArtefactFilter(o.artefactFilter); // refused now rather than in every job
  const choice: ArtefactChoice = { kinds };
  if (o.artefactFilter) choice.filter = o.artefactFilter;
  if (o.artefactMaxBytes !== undefined) {
    const n = Number(o.artefactMaxBytes);
    if (!Number.isInteger(n) || n < 1) throw new SandtrailError('USAGE', '--artefact-max-bytes must be a positive whole number of bytes');
    choice.maxBytes = n;
  }
  return choice;
}
