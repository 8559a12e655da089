import { isIP } from 'node:net';
import { hostName } from '../store/index.js';

/**
 * The values of a sandbox report as the export formats take them: verdicts as a result, host
 * names, URLs and registry keys in the forms the formats require, the usable items of its lists.
 * Reports come from malware: anything else is left out, never repaired into something it was not.
 */

type Attrs = Record<string, unknown>;

/** `malware-result-ov` from a report's verdicts: any malware class wins, then greyware, then clean. */
export function resultOf(verdicts: readonly string[]): 'malicious' | 'suspicious' | 'benign' | 'unknown' {
  const v = verdicts.map((x) => x.toUpperCase());
  if (v.some((x) => x !== 'CLEAN' && x !== 'GREYWARE' && x !== 'ADWARE' && x !== '')) return 'malicious';
  if (v.some((x) => x === 'GREYWARE' || x === 'ADWARE')) return 'suspicious';
  if (v.includes('CLEAN')) return 'benign';
  return 'unknown';
}

/** A host name as a domain-name object's value (ASCII, lower-case), or undefined for an address or anything else. */
export function domainValue(host: unknown): string | undefined {
  const h = hostName(host);
  return h !== undefined && isIP(h) === 0 ? h : undefined;
}

/** A URL part with every character RFC 3986 does not allow there percent-encoded (`%` kept before two hex digits). */
function rfc3986Part(part: string, allowed: RegExp): string {
  return part.replace(/%(?![0-9A-Fa-f]{2})|[^%]/gu, (c) => (allowed.test(c) ? c : encodeURIComponent(c).replace(/!/g, '%21')));
}

/** pchar and `/` (a path), with `?` in a query or fragment (RFC 3986 section 3.3, 3.4, 3.5). */
const PATH_CHAR = /^[A-Za-z0-9\-._~!$&'()*+,;=:@/]$/;
const QUERY_CHAR = /^[A-Za-z0-9\-._~!$&'()*+,;=:@/?]$/;

/**
 * An absolute http(s) or ftp URL in its RFC 3986 form, or undefined. WHATWG's serialization
 * leaves some characters RFC 3986 forbids (`]`, `|`, `^`...) unencoded in the path and query:
 * those are percent-encoded too, so a validator reading the value as a URI accepts it.
 */
export function urlValue(url: unknown): string | undefined {
  if (typeof url !== 'string' || !/^(https?|ftp):\/\//i.test(url.trim())) return undefined;
  try {
    const u = new URL(url.trim());
    if (!u.hostname) return undefined;
    const path = rfc3986Part(u.pathname, PATH_CHAR);
    const query = u.search ? `?${rfc3986Part(u.search.slice(1), QUERY_CHAR)}` : '';
    const fragment = u.hash ? `#${rfc3986Part(u.hash.slice(1), QUERY_CHAR)}` : '';
    return `${u.protocol}//${u.host}${path}${query}${fragment}`;
  } catch {
    return undefined;
  }
}

/** Registry hives as STIX names them: the abbreviations (HKLM...) written out. */
const HIVES: Readonly<Record<string, string>> = {
  HKLM: 'HKEY_LOCAL_MACHINE',
  HKCU: 'HKEY_CURRENT_USER',
  HKCR: 'HKEY_CLASSES_ROOT',
  HKU: 'HKEY_USERS',
  HKCC: 'HKEY_CURRENT_CONFIG',
};

/** A registry key with its hive's full name (`HKLM\\Software` → `HKEY_LOCAL_MACHINE\\Software`). */
export function registryKey(key: string): string {
  return key.replace(/^(HKLM|HKCU|HKCR|HKU|HKCC)(?=\\|$)/i, (h) => HIVES[h.toUpperCase()] as string);
}

/** The distinct non-empty strings of a report's list (anything else in it skipped). */
export function strings(list: unknown): string[] {
  return Array.isArray(list) ? [...new Set(list.filter((x): x is string => typeof x === 'string' && x !== ''))] : [];
}

/** The object items of a report's list (anything else in it skipped). */
export function records(list: unknown): Attrs[] {
  return Array.isArray(list) ? list.filter((x): x is Attrs => typeof x === 'object' && x !== null && !Array.isArray(x)) : [];
}
