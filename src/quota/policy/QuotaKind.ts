/**
 * The quota kinds of the spec's §Limits table, spelled as the ledger stores them. "Searches /
 * Downloads" is one row of that table but rule 9 gives them separate units (searches and file
 * downloads), so they are two kinds here.
 */
export type QuotaKind =
  | 'api_requests'
  | 'searches'
  | 'downloads'
  | 'livehunt'
  | 'retrohunt'
  | 'diff_sessions'
  | 'private_scanning_files'
  | 'private_scanning_urls'
  | 'asm_entities'
  | 'private_graphs';

/** Every quota kind, in the order reports list them. */
export const QUOTA_KINDS: readonly QuotaKind[] = Object.freeze([
  'api_requests',
  'searches',
  'downloads',
  'livehunt',
  'retrohunt',
  'diff_sessions',
  'private_scanning_files',
  'private_scanning_urls',
  'asm_entities',
  'private_graphs',
] as const);

/** True when `s` names a quota kind. */
export function isQuotaKind(s: unknown): s is QuotaKind {
  return typeof s === 'string' && (QUOTA_KINDS as readonly string[]).includes(s);
}
