import { SandtrailError } from '../errors/index.js';
import type { DecoderChoice } from './decoders.js';
import { ApiSource, type ApiSourceOptions } from './ApiSource.js';
import { DirectorySource } from './DirectorySource.js';
import type { FeedSource } from './FeedSource.js';

export interface SourceSettings {
  decoder?: DecoderChoice;
  decoderThreads?: number;
  /** Needed for the `api` source: the GTI client (with its key) and path spelling. */
  api?: Omit<ApiSourceOptions, 'decoder' | 'decoderThreads'>;
}

/** Resolves a source spec (`dir:PATH` or `api`) into a FeedSource. */
export function createSource(spec: string, settings: SourceSettings = {}): FeedSource {
  if (spec.startsWith('dir:')) {
    const path = spec.slice(4);
    if (!path) throw new SandtrailError('USAGE', 'dir: source needs a path, e.g. --source dir:./feed');
    return new DirectorySource(path, settings);
  }
  if (spec === 'api') {
    if (!settings.api) throw new SandtrailError('USAGE', 'the api source needs GTI_APIKEY');
    return new ApiSource({ ...settings.api, decoder: settings.decoder, decoderThreads: settings.decoderThreads });
  }
  throw new SandtrailError('USAGE', `unknown source "${spec}": expected dir:PATH or api`);
}
