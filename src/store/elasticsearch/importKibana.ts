import { readFile } from 'node:fs/promises';
import { SandtrailError } from '../../errors/index.js';

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
  const base = kibanaUrl.replace(/\/+$/, '');
  const space = o.space && o.space !== 'default' ? `/s/${encodeURIComponent(o.space)}` : '';
  const url = `${base}${space}/api/saved_objects/_import?overwrite=${o.overwrite === false ? 'false' : 'true'}`;
  const form = new FormData();
  form.append('file', new Blob([ndjson], { type: 'application/ndjson' }), 'sandtrail.ndjson');
  const headers: Record<string, string> = { 'kbn-xsrf': 'sandtrail' };
  if (auth && 'apiKey' in auth) headers.authorization = `ApiKey ${auth.apiKey}`;
  else if (auth) headers.authorization = `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}`;
  let res: Response;
  try {
    res = await (o.fetch ?? fetch)(url, { method: 'POST', headers, body: form });
  } catch (err) {
    throw new SandtrailError('SINK_UNAVAILABLE', `cannot reach Kibana at ${base}: ${(err as Error).message}`, {}, { cause: err });
  }
  const text = await res.text();
  if (!res.ok) {
    const code = res.status === 401 || res.status === 403 ? 'CONFIG_INVALID' : res.status >= 500 ? 'SINK_UNAVAILABLE' : 'USAGE';
    throw new SandtrailError(code, `Kibana import failed with HTTP ${res.status}: ${text.slice(0, 500)}`, { status: res.status });
  }
  const body = JSON.parse(text) as Partial<KibanaImportResult>;
  return { success: body.success === true, successCount: body.successCount ?? 0, errors: body.errors ?? [] };
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
