/**
 * Strict parsing of a file_behaviour id, `<file sha256>_<sandbox name>`. The id is the upsert
 * key of every sink, so anything ambiguous is refused rather than repaired: the only change
 * made is lower-casing the hex part (hashes compare case-insensitively; the sandbox part is
 * kept verbatim because it is an opaque name).
 */

/** A well-formed behaviour id, split. */
export interface BehaviourId {
  /** Canonical id: lower-case sha256, `_`, sandbox part verbatim. */
  id: string;
  /** 64 lower-case hex characters. */
  sha256: string;
  /** Everything after the first `_`, verbatim (may carry a private-analysis `-<timestamp>` suffix). */
  sandboxPart: string;
  /** `sandboxPart` without a trailing `-<timestamp>` suffix (9 digits or more; unless that would leave nothing). */
  sandboxName: string;
  /** True when the input's hex part was not already lower-case. */
  hexChanged: boolean;
}

/**
 * Longest accepted id in UTF-8 bytes: Elasticsearch refuses `_id`s over 512 bytes, and a
 * record we cannot store under its own id must be refused here, not fail later in the sink.
 */
export const MAX_ID_BYTES = 512;

const HEX_PREFIX_RE = /^[0-9a-fA-F]{64}_/;
// Control characters would corrupt logs, file names and ES ids; real sandbox names have none.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL_RE = /[\u0000-\u001f\u007f]/;
const EDGE_SPACE_RE = /^\s|\s$/;
// a Unix time, in seconds or milliseconds (9 digits and more): a name such as `Windows-10` or
// `Android-11` ends in digits too, and is a sandbox of its own
const TIMESTAMP_SUFFIX_RE = /-\d{9,}$/;

/** Removes a trailing private-analysis `-<timestamp>` suffix, unless nothing would remain. */
export function stripTimestampSuffix(name: string): string {
  const stripped = name.replace(TIMESTAMP_SUFFIX_RE, '');
  return stripped === '' ? name : stripped;
}

/** Parses `id`; returns the parts, or a message saying why it is not a behaviour id. */
export function parseBehaviourId(id: string): BehaviourId | string {
  if (id.length < 66) return 'id must be <64 hex sha256>_<sandbox name>';
  // A UTF-16 unit encodes to at most 3 UTF-8 bytes: only long ids need the exact count.
  if (id.length * 3 > MAX_ID_BYTES && Buffer.byteLength(id, 'utf8') > MAX_ID_BYTES) {
    return `id longer than ${MAX_ID_BYTES} UTF-8 bytes`;
  }
  if (!HEX_PREFIX_RE.test(id)) return 'id must start with a 64-hex sha256 followed by "_"';
  const sandboxPart = id.slice(65);
  if (CONTROL_RE.test(sandboxPart)) return 'sandbox name contains control characters';
  if (EDGE_SPACE_RE.test(sandboxPart)) return 'sandbox name has leading or trailing whitespace';
  const hex = id.slice(0, 64);
  const sha256 = hex.toLowerCase();
  const hexChanged = sha256 !== hex;
  return {
    id: hexChanged ? `${sha256}_${sandboxPart}` : id,
    sha256,
    sandboxPart,
    sandboxName: stripTimestampSuffix(sandboxPart),
    hexChanged,
  };
}

/**
 * The id as the stores key it (the hex part lower-cased), for an id a user pasted as the feed
 * spelled it; anything that is not a behaviour id is returned as it is.
 */
export function canonicalBehaviourId(id: string): string {
  const parsed = parseBehaviourId(id);
  return typeof parsed === 'string' ? id : parsed.id;
}
