/**
 * Normalizer: raw file_behaviour feed lines → canonical behaviour documents with pivots, or
 * typed rejections (DESIGN.md §3); private file reports → their own document type
 * (normalizePrivateFile). This file only re-exports; see each module for details.
 */
export { SCHEMA_VERSION, REJECT_CODES, WARNING_CODES } from './BehaviourDoc.js';
export type { BehaviourDoc, NormalizeResult, NormalizeWarning, Pivots, RejectCode, Rejection, WarningCode } from './BehaviourDoc.js';
export type {
  CanonicalAttributes,
  ContentModelSet,
  DnsLookup,
  DroppedFile,
  FileCopy,
  HttpConversation,
  IdsAlert,
  IdsAlertContext,
  IpTraffic,
  KeyValueSet,
  MitreTechnique,
  ProcessNode,
  RegistryKeySet,
  SigmaMatch,
  SigmaResult,
  SignatureMatch,
  TlsEntry,
} from './CanonicalAttributes.js';
export { normalizeLine, normalizeRecord } from './normalizeRecord.js';
export { MAX_EPOCH_SECONDS } from './coerceScalar.js';
export { describeError } from './readEnvelope.js';
export type { NormalizeOptions } from './normalizeRecord.js';
export { DEFAULT_MAX_DEPTH, ELASTICSEARCH_MAX_DEPTH, textDepth, valueDepth } from './jsonDepth.js';
export { computePivots } from './computePivots.js';
export { canonicalBehaviourId, parseBehaviourId, stripTimestampSuffix, MAX_ID_BYTES } from './parseBehaviourId.js';
export type { BehaviourId } from './parseBehaviourId.js';
export { KNOWN_ATTRIBUTES } from './normalizeAttributes.js';
export { MAX_PROCESS_TREE_DEPTH } from './normalizeProcessTree.js';
export { MAX_WARNINGS } from './WarningLog.js';
export { normalizePrivateFile } from './normalizePrivateFile.js';
export type { PrivateFileOptions } from './normalizePrivateFile.js';
export { PRIVATE_FILE_SCHEMA_VERSION } from './PrivateFileDoc.js';
export type { PrivateFileDoc, PrivateFileResult, TridEntry } from './PrivateFileDoc.js';
