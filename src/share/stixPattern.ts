/**
 * STIX patterning (STIX 2.1 §9) for the indicators an export carries. Values come from sandbox
 * reports and may hold anything: a string literal escapes `\` and `'` (the only escapes the
 * grammar knows), so a hostile value stays one literal.
 */

/** A STIX pattern string literal: `'` ... `'`, with `\` and `'` escaped. */
export function literal(value: string): string {
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/** `[type:path = 'value']`: one comparison, the form every indicator of an export has. */
export function equalsPattern(objectPath: string, value: string): string {
  return `[${objectPath} = ${literal(value)}]`;
}

/** The object path of a file hash in a pattern (`file:hashes.'SHA-256'`). */
export function fileHashPath(algorithm: string): string {
  return `file:hashes.${literal(algorithm)}`;
}
