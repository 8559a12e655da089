import type { PivotKind } from './Sink.js';

/**
 * Every spelling of a pivot kind that commands and the read API accept: the stored name (as in
 * documents, API routes and ids such as `sigma_rule_id:...`) and the command line's flag spelling
 * (`sigma-rule`, `dropped-sha256`).
 */
export const PIVOT_KIND_NAMES: Readonly<Record<string, PivotKind>> = Object.freeze({
  behash: 'behash',
  'sigma-rule': 'sigma_rule_id',
  sigma_rule_id: 'sigma_rule_id',
  ja3: 'ja3',
  ja3s: 'ja3s',
  'dropped-sha256': 'dropped_sha256',
  dropped_sha256: 'dropped_sha256',
  sha256: 'sha256',
});

/** The pivot kind a name spells, or null when it names none. */
export function pivotKindOf(name: string): PivotKind | null {
  return Object.hasOwn(PIVOT_KIND_NAMES, name) ? (PIVOT_KIND_NAMES[name] as PivotKind) : null;
}
