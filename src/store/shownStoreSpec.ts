/**
 * A store spec as shown in messages: whatever stands before an `@` (a user and password, even
 * one written without a scheme, `es:user:pass@host`) is masked.
 */
export function shownStoreSpec(spec: string): string {
  const at = spec.lastIndexOf('@');
  if (at < 0) return spec;
  const head = /^((?:elasticsearch|es):)?([a-z][a-z0-9+.-]*:\/\/)?/i.exec(spec)?.[0] ?? '';
  return `${head}***@${spec.slice(at + 1)}`;
}
