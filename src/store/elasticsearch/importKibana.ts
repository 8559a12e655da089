import { readFile } from 'node:fs/promises';
import { SandtrailError } from '../../errors/index.js';
import { shownStoreSpec } from '../shownStoreSpec.js';

export type KibanaAuth = { apiKey: string } | { username: string; password: string } | undefined;

export interface KibanaImportResult {
  success: boolean;
  successCount: number;
  errors: unknown[];
}

export interface KibanaImportOptions {
  /** Kibana space id; default space when absent. */
  space?: string;
  /** Replace objects with the same ids (default true). */
  overwrite?: boolean;
  /** Test seam. */
  fetch?: typeof fetch;
}

/** Checks that every non-blank line is a JSON object; returns the number of objects. */
export function validateNdjson(text: string): number {
  let count = 0;
  text.split('\n').forEach((line, k) => {
    if (line.trim() === '') return;
    let v: unknown;
    try {
      v = JSON.parse(line);
    } catch (err) {
      throw new SandtrailError('USAGE', `saved objects file line ${k + 1} is not JSON: ${(err as Error).message}`);
    }
    if (typeof v !== 'object' || v === null || Array.isArray(v))
      throw new SandtrailError('USAGE', `saved objects file line ${k + 1} is not a JSON object`);
    count++;
  });
  return count;
}

/** Posts NDJSON text to Kibana's `_import` API as a multipart file upload. */
export async function importKibanaNdjson(
  kibanaUrl: string,
  auth: KibanaAuth,
  ndjson: string,
  o: KibanaImportOptions = {},
): Promise<KibanaImportResult> {
  validateNdjson(ndjson);
  const lifted = liftCredentials(kibanaUrl);
  const credentials = lifted.auth ?? auth;
  const base = lifted.url.replace(/\/+$/, '');
  const space = o.space && o.space !== 'default' ? `/s/${encodeURIComponent(o.space)}` : '';
  const url = `${base}${space}/api/saved_objects/_import?overwrite=${o.overwrite === false ? 'false' : 'true'}`;
  const form = new FormData();
  form.append('file', new Blob([ndjson], { type: 'application/ndjson' }), 'sandtrail.ndjson');
  const headers: Record<string, string> = { 'kbn-xsrf': 'sandtrail' };
  if (credentials && 'apiKey' in credentials) headers.authorization = `ApiKey ${credentials.apiKey}`;
  else if (credentials)
    headers.authorization = `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64')}`;
  let res: Response;
  try {
    res = await (o.fetch ?? fetch)(url, { method: 'POST', headers, body: form });
  } catch (err) {
    throw new SandtrailError('SINK_UNAVAILABLE', `cannot reach Kibana at ${base}: ${(err as Error).message}`, {}, { cause: err });
  }
  const text = await res.text();
  if (!res.ok) {
    // refused credentials are SINK_AUTH (exit 1), as Elasticsearch's are
    const refused = res.status === 401 || res.status === 403;
    const code = refused ? 'SINK_AUTH' : res.status >= 500 ? 'SINK_UNAVAILABLE' : 'USAGE';
    const fix = refused ? ' (check kibana.apiKey / kibana.username and password, else the Elasticsearch credentials used for Kibana)' : '';
    throw new SandtrailError(code, `Kibana import failed with HTTP ${res.status}: ${text.slice(0, 500)}${fix}`, { status: res.status });
  }
  const body = JSON.parse(text) as Partial<KibanaImportResult>;
  return { success: body.success === true, successCount: body.successCount ?? 0, errors: body.errors ?? [] };
}

/**
 * A Kibana URL's own user and password (`https://user:pass@kibana:5601`), taken out of it: fetch
 * refuses a URL holding them, and quotes it whole in its error. Written in the URL, they win over
 * the configured ones.
 */
function liftCredentials(kibanaUrl: string): { url: string; auth: KibanaAuth } {
  let u: URL;
  try {
    u = new URL(kibanaUrl);
  } catch {
    throw new SandtrailError('USAGE', `bad Kibana URL "${shownStoreSpec(kibanaUrl)}": expected http(s)://host:5601`);
  }
  if (!u.username && !u.password) return { url: kibanaUrl, auth: undefined };
  let auth: KibanaAuth;
  try {
    auth = { username: decodeURIComponent(u.username), password: decodeURIComponent(u.password) };
  } catch {
    throw new SandtrailError(
      'USAGE',
      `bad Kibana URL "${shownStoreSpec(kibanaUrl)}": a % in its user or password starts no escape (write %25)`,
    );
  }
  u.username = '';
  u.password = '';
  return { url: u.toString(), auth };
}

/** Imports a saved objects NDJSON file (e.g. `kibana/sandtrail.ndjson`) into Kibana. */
export async function importKibanaObjects(
  kibanaUrl: string,
  auth: KibanaAuth,
  ndjsonPath: string,
  o: KibanaImportOptions = {},
): Promise<KibanaImportResult> {
  let text: string;
  try {
    text = await readFile(ndjsonPath, 'utf8');
  } catch (err) {
    throw new SandtrailError('USAGE', `cannot read ${ndjsonPath}: ${(err as Error).message}`);
  }
  return importKibanaNdjson(kibanaUrl, auth, text, o);
}
