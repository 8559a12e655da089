// scheme://user:password@ — the password may itself hold '@' (greedy up to the last one of the authority)
const URL_PASSWORD = /\b([a-z][a-z0-9+.-]*:\/\/[^\s:/?#@"'<>]*):[^\s/?#"'<>]*@/gi;

/**
 * Replaces the password of every URL inside `text` with `***`: error messages of Redis,
 * Elasticsearch or fetch quote the URL they failed on. Every SandtrailError's message goes
 * through it, and the logger's messages too.
 */
export function redactUrlCredentials(text: string): string {
  return text.includes('@') ? text.replace(URL_PASSWORD, '$1:***@') : text;
}
