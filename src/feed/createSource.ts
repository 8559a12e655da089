import { SandtrailError } from '../errors/index.js';
import type { DecoderChoice } from './decoders.js';
import { DirectorySource } from './DirectorySource.js';
import type { FeedSource } from './FeedSource.js';

export interface SourceSettings {
  decoder?: DecoderChoice;
  decoderThreads?: number;
}

/** Resolves a source spec (`dir:PATH`) into a FeedSource. */
export function createSource(spec: string, settings: SourceSettings = {}): FeedSource {
  if (spec.startsWith('dir:')) {
    const path = spec.slice(4);
    if (!path) throw new SandtrailError('USAGE', 'dir: source needs a path, e.g. --source dir:./feed');
    return new DirectorySource(path, settings);
  }
  throw new SandtrailError('USAGE', `unknown source "${spec}": expected dir:PATH`);
}
