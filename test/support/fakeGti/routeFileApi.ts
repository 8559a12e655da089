import type { ArtefactLinks } from './artefactLinks.js';
import { collectionPage } from './collectionPage.js';
import { apiError, replyCutMidBody, type Exchange } from './exchange.js';
import type { FaultState } from './faults.js';
import { ARTEFACT_KINDS, hashesOf, type ArtefactKind, type FakeFile, type FileCatalog } from './fileCatalog.js';
import { attackTechnique, fileObject, techniqueIdsOf } from './relatedObjects.js';

/** What the file routes need from the server. */
export interface FileApiContext {
  catalog: FileCatalog;
  faults: FaultState;
  artefacts: ArtefactLinks;
  /** `http://127.0.0.1:PORT` */
  origin(): string;
  privateLicence: boolean;
}

const FILE_BEHAVIOURS_RE = /^\/api\/v3\/files\/([^/]+)\/behaviours$/;
const PRIVATE_FILE_RE = /^\/api\/v3\/private\/files\/([^/]+)$/;
const BEHAVIOUR_PREFIX = '/api/v3/file_behaviours/';
const RELATIONSHIPS = ['file', 'attack_techniques'];

function safeDecode(s: string): string | undefined {
  try {
    return decodeURIComponent(s);
  } catch {
    return undefined;
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The file routes of the API (already authenticated, past the burst fault): `/files/{id}/behaviours`,
 * `/file_behaviours/{id}` with its relationships (`file`, `attack_techniques`, and
 * `relationships/{name}` descriptors; any other name answers 404 NotFoundError) and artefacts
 * (`pcap`, `evtx`, `memdump`, `html`), and `/private/files/{sha256}`. False when the request is
 * none of them.
 */
export async function routeFileApi(ex: Exchange, c: FileApiContext): Promise<boolean> {
  const path = ex.entry.path;
  const baseUrl = `${c.origin()}/api/v3`;
  const self = new URL(ex.req.url ?? '/', c.origin());

  if (path.startsWith('/api/v3/private/') && !c.privateLicence) {
    ex.reply(403, apiError('ForbiddenError', 'This endpoint requires a Private Scanning license'));
    return true;
  }
  if (ex.req.method !== 'GET') return false;

  /** Answers the forbidden / notFoundHashes faults of `hashes`; true when it did. */
  const blocked = (hashes: string[], what: string): boolean => {
    if (c.faults.fileBlocked('forbidden', hashes)) {
      ex.reply(403, apiError('ForbiddenError', 'You are not allowed to perform the requested operation'));
      return true;
    }
    if (c.faults.fileBlocked('notFoundHashes', hashes)) {
      ex.notFound(what);
      return true;
    }
    return false;
  };
  /** A 200 single-object answer (cut mid-body under the resetMidObject fault). */
  const object = async (body: unknown): Promise<void> => {
    if (c.faults.takeResetMidObject(path)) return replyCutMidBody(ex, body);
    ex.reply(200, body);
  };
  const page = async (items: unknown[], extraLinks: Record<string, string> = {}): Promise<void> => {
    const r = collectionPage(items, self);
    if ('error' in r) return ex.reply(400, r.error);
    const body = { ...r.page, links: { ...r.page.links, ...extraLinks } };
    if (c.faults.takeResetMidBody(path)) return replyCutMidBody(ex, body);
    ex.reply(200, body);
  };
  const served = (b: Record<string, unknown>): Record<string, unknown> => {
    const { context_attributes: _feedOnly, ...rest } = b;
    const links = isObject(rest.links) ? rest.links : {};
    return { ...rest, links: { ...links, self: `${baseUrl}/file_behaviours/${encodeURIComponent(String(b.id))}` } };
  };

  const fb = FILE_BEHAVIOURS_RE.exec(path);
  if (fb) {
    const id = safeDecode(fb[1] as string) ?? '';
    const file = c.catalog.byHash(id);
    if (blocked(file ? hashesOf(file) : [id], `File "${id}"`)) return true;
    if (!file) ex.notFound(`File "${id}"`);
    else await page(file.behaviours.map(served));
    return true;
  }

  const pf = PRIVATE_FILE_RE.exec(path);
  if (pf) {
    const id = safeDecode(pf[1] as string) ?? '';
    if (!/^[0-9a-f]{64}$/i.test(id)) {
      ex.reply(400, apiError('InvalidArgumentError', `"${id}" is not a valid SHA-256 (MD5 and SHA-1 are not accepted for private files)`));
      return true;
    }
    const file = c.catalog.byHash(id);
    if (blocked(file ? hashesOf(file) : [id], `Private file "${id}"`)) return true;
    if (!file?.private) {
      ex.notFound(`Private file "${id}"`);
      return true;
    }
    const attributes: Record<string, unknown> = { ...file.private };
    if (ex.entry.xTool && file.gtiAssessment) attributes.gti_assessment = file.gtiAssessment;
    const data = { type: 'private_file', id: file.sha256, attributes, links: { self: `${baseUrl}/private/files/${file.sha256}` } };
    await object({ data });
    return true;
  }

  if (!path.startsWith(BEHAVIOUR_PREFIX)) return false;
  const segments = path.slice(BEHAVIOUR_PREFIX.length).split('/').map(safeDecode);
  const [id, rel, sub] = segments;
  const found = id === undefined ? undefined : c.catalog.behaviour(id);
  const what = `Behaviour "${id ?? path}"`;
  if (blocked(found ? hashesOf(found.file) : [(id ?? '').slice(0, 64)], what)) return true;
  if (!found || segments.includes(undefined) || segments.length > 3) {
    ex.notFound(what);
    return true;
  }
  const { file, behaviour } = found;
  const stored = String(behaviour.id);
  const related = `${baseUrl}/file_behaviours/${encodeURIComponent(stored)}`;
  if (rel === undefined) await object({ data: served(behaviour) });
  else if (segments.length === 2 && ARTEFACT_KINDS.includes(rel as ArtefactKind)) c.artefacts.redirect(ex, stored, rel as ArtefactKind);
  else if (segments.length === 2 && rel === 'file') await object({ data: fileObject(file, baseUrl) });
  else if (segments.length === 2 && rel === 'attack_techniques')
    await page(techniqueIdsOf(behaviour).map((t) => attackTechnique(t, baseUrl)));
  else if (rel === 'relationships' && sub !== undefined && RELATIONSHIPS.includes(sub))
    await descriptors(ex, file, behaviour, sub, related, page);
  else ex.notFound(`Relationship "${segments.slice(1).join('/')}"`);
  return true;
}

/** `/file_behaviours/{id}/relationships/{name}`: the related objects' descriptors (`{type, id}`) only. */
async function descriptors(
  ex: Exchange,
  file: FakeFile,
  behaviour: Record<string, unknown>,
  name: string,
  related: string,
  page: (items: unknown[], extraLinks?: Record<string, string>) => Promise<void>,
): Promise<void> {
  if (name === 'file') {
    const links = { self: `${related}/relationships/file`, related: `${related}/file` };
    return ex.reply(200, { data: { type: 'file', id: file.sha256 }, links });
  }
  await page(
    techniqueIdsOf(behaviour).map((t) => ({ type: 'attack_technique', id: t })),
    { related: `${related}/attack_techniques` },
  );
}
