/**
 * Sharing what a hunt finds with a team's other tools, in the formats they already speak: STIX
 * 2.1 bundles and MISP events exported as streams from either store, with ids derived from
 * content so that a re-export updates instead of duplicating.
 */
export { exportStix, type ExportOptions, type ExportSummary } from './exportStix.js';
export { exportMisp } from './exportMisp.js';
export { describeSelection, selectedBehaviours, selectionKey, type ExportSelection } from './selectedBehaviours.js';
export { stixObjectsOf, type StixObject } from './stixObjects.js';
export { mispOf, type MispAttribute, type MispObject } from './mispObjects.js';
export { scoId, derivedId } from './stixIds.js';
export { literal as stixLiteral } from './stixPattern.js';
export { IDENTITY, EXTENSION_DEFINITION } from './stixProducer.js';
export { BoundedSeen } from './BoundedSeen.js';
export {
  HIT_OVERLAP_MS,
  collectionInput,
  exportCollectionId,
  saveExport,
  syncWatchCollection,
  watchCollection,
  watchCollectionDescription,
  watchCollectionId,
  type ShareSummary,
  type SharingStore,
} from './sharedCollections.js';
