import type { Writable } from 'node:stream';
import type { Sink, WatchStore } from '../store/index.js';
import { selectedBehaviours, selectionKey, type ExportSelection } from './selectedBehaviours.js';
import { StixBundleWriter } from './StixBundleWriter.js';
import { stixObjectsOf } from './stixObjects.js';

/** What an export wrote. */
export interface ExportSummary {
  behaviours: number;
  /** STIX objects, or MISP objects and attributes. */
  objects: number;
}

/** Tuning of an export: the store page and the window of ids written once. */
export interface ExportOptions {
  pageSize?: number;
  seenCap?: number;
}

/** Writes the selection as one STIX 2.1 bundle to `out`, as a stream. */
export async function exportStix(
  store: { sink: Sink; watches: WatchStore },
  selection: ExportSelection,
  out: Writable,
  o: ExportOptions = {},
): Promise<ExportSummary> {
  const writer = new StixBundleWriter(out, selectionKey(selection), o.seenCap);
  let behaviours = 0;
  for await (const doc of selectedBehaviours(store, selection, o.pageSize)) {
    await writer.write(stixObjectsOf(doc));
    behaviours++;
  }
  await writer.end();
  return { behaviours, objects: writer.written };
}
