/**
 * The two objects every export starts with: sandtrail's `identity` (the `created_by_ref` of what
 * it derives) and the `extension-definition` of the properties STIX has no place for (behash,
 * JA3/JA3S, sigma rules, verdicts). Their ids and content are fixed, so every export and every
 * TAXII page carries the same two objects.
 */
export const IDENTITY_ID = 'identity--8a3e6f4c-5b7d-4c1e-9f20-4d6b8a0c2e14';
export const EXTENSION_ID = 'extension-definition--1d7c3b9e-2f4a-4e6b-8c0d-7a9e1f3b5c26';

const FIXED = '2026-11-01T00:00:00.000Z';

/** The text `schema` of the extension: STIX allows prose where no URL is at hand. */
const SCHEMA = [
  'Properties of a malware-analysis from the Google Threat Intelligence file-behaviour feed:',
  'behaviour_id (string, the report id <sha256>_<sandbox>), sandbox_name (string),',
  'behash (string, the behaviour similarity hash), ja3 and ja3s (lists of 32-hex TLS fingerprints),',
  'sigma_rules (list of {rule_id, title, level}), verdicts (list of the sandbox verdicts).',
].join(' ');

export const IDENTITY = Object.freeze({
  type: 'identity',
  spec_version: '2.1',
  id: IDENTITY_ID,
  created: FIXED,
  modified: FIXED,
  name: 'sandtrail',
  identity_class: 'system',
  description: 'Sandbox behaviour reports of the Google Threat Intelligence file-behaviour feed, as stored by sandtrail.',
});

export const EXTENSION_DEFINITION = Object.freeze({
  type: 'extension-definition',
  spec_version: '2.1',
  id: EXTENSION_ID,
  created_by_ref: IDENTITY_ID,
  created: FIXED,
  modified: FIXED,
  name: 'sandtrail sandbox behaviour',
  description: 'Pivot values of a sandbox behaviour report that STIX 2.1 has no property for.',
  schema: SCHEMA,
  version: '1.0.0',
  extension_types: ['property-extension'],
});
