import canonicalizeModule from 'canonicalize';
import { stringify as uuidStringify, v5 as uuidv5 } from 'uuid';

// the package is CommonJS (`module.exports = serialize`) while its typings declare a default export
const canonicalize = canonicalizeModule as unknown as (input: unknown) => string | undefined;

/** STIX 2.1 §2.9: the namespace of deterministic Cyber-observable ids. */
export const SCO_NAMESPACE = '00abedb4-aa42-466c-9c01-fed23315a9b7';

/**
 * sandtrail's own namespace for the ids of the objects it derives (analyses, malware, indicators,
 * relationships): the same content gives the same id in every export, so a TIP updates an object
 * instead of adding a copy.
 */
export const SANDTRAIL_NAMESPACE = '3f1c5a52-8b2e-5d8e-9a61-5a4e7d2c9b10';

/** The hash a file's id is computed from, in the order STIX 2.1 §2.9 gives. */
const HASH_ORDER = ['MD5', 'SHA-1', 'SHA-256', 'SHA-512'] as const;

/**
 * The id of a Cyber-observable from its id-contributing properties (STIX 2.1 §2.9): UUIDv5 of
 * their RFC 8785 canonical JSON. `hashes` contributes one hash only, the first of HASH_ORDER.
 */
export function scoId(type: string, contributing: Record<string, unknown>): string {
  const props: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(contributing)) {
    if (v === undefined) continue;
    if (k === 'hashes' && v && typeof v === 'object') {
      const hashes = v as Record<string, string>;
      const first = HASH_ORDER.find((h) => typeof hashes[h] === 'string');
      if (first) props.hashes = { [first]: hashes[first] };
      continue;
    }
    props[k] = v;
  }
  return `${type}--${uuidv5(canonicalize(props) ?? '{}', SCO_NAMESPACE)}`;
}

/**
 * The id of an object sandtrail derives, from the key that makes it that object (a report id, a
 * pattern...): the bits of a UUIDv5 of the key in SANDTRAIL_NAMESPACE, marked version 4, since
 * STIX asks UUIDv4 of domain and relationship objects and consumers check the version. Like a
 * random one it is 122 bits nobody else chose; unlike one, the same key always gives it.
 */
export function derivedId(type: string, key: string): string {
  const bytes = uuidv5(`${type}\u0000${key}`, SANDTRAIL_NAMESPACE, new Uint8Array(16));
  bytes[6] = ((bytes[6] as number) & 0x0f) | 0x40;
  return `${type}--${uuidStringify(bytes)}`;
}
