import type { PivotKind } from '../../store/index.js';

/** Condition flags of `watch add` (each repeatable) → option key and pivot kind, in `--help` order. */
export const WATCH_FLAGS: readonly [flag: string, key: string, kind: PivotKind, what: string][] = [
  ['--behash <value>', 'behash', 'behash', 'behaviour similarity hash'],
  ['--sigma-rule <id>', 'sigmaRule', 'sigma_rule_id', 'sigma rule_id'],
  ['--ja3 <digest>', 'ja3', 'ja3', 'JA3 TLS client fingerprint (32 hex digits)'],
  ['--ja3s <digest>', 'ja3s', 'ja3s', 'JA3S TLS server fingerprint (32 hex digits)'],
  ['--dropped-sha256 <hash>', 'droppedSha256', 'dropped_sha256', 'SHA-256 of a dropped file'],
  ['--sha256 <hash>', 'sha256', 'sha256', 'SHA-256 of the analysed file'],
];
