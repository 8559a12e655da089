import { normalizeApiPath, type Operation } from '../policy/index.js';

/** Path segments that identify one object rather than an endpoint: hashes, minutes, numeric ids, behaviour ids. */
const ID_SEGMENT = /^([0-9a-fA-F]{32,64}|\d{10,12}|\d+|[0-9a-fA-F]{64}_.+)$/;

/** Collections of the API whose next path segment names one object (`/users/{id}`, `/files/{id}`...). */
const OBJECT_COLLECTIONS: ReadonlySet<string> = new Set([
  'analyses',
  'collections',
  'comments',
  'domains',
  'file_behaviours',
  'files',
  'graphs',
  'groups',
  'ip_addresses',
  'urls',
  'users',
]);

/** Segments that follow a collection but are routes of their own, not object ids (`/files/analyses/{id}`). */
const ROUTES_UNDER: Readonly<Record<string, ReadonlySet<string>>> = {
  files: new Set(['analyses', 'upload_url']),
  urls: new Set(['analyses']),
};

/**
 * Groups operations for the ledger's per-operation view (and the metrics' operation label): API
 * calls by method and route, every object id replaced by a placeholder whatever its shape
 * (`GET /users/{id}/overall_quotas`, `GET /files/{id}/behaviours`, `GET /feeds/file_behaviours/{id}`,
 * feed-line links one label per kind: `GET /feeds/file_behaviours/{token}/pcap`), so a label
 * never carries a user id, a hash or a token and their number stays bounded; other operations by
 * their name.
 */
export function operationLabel(op: Operation): string {
  if (op.op !== 'api') return op.op;
  return `${op.method.toUpperCase()} ${routeOf(op.path)}`;
}

function routeOf(path: string): string {
  const segments = normalizeApiPath(path);
  if (segments === null) return (path.split('?')[0] ?? path).replace(/^\/api\/v3(?=\/)/, '');
  const out: string[] = [];
  let i = 0;
  if (segments[0] === 'feeds' && segments.length >= 3) {
    // `/feeds/<feed>/<minute>`, `/feeds/<feed>/hourly/<hour>`, feed-line links `/feeds/<feed>/<token>/<kind>`
    out.push('feeds', segments[1] as string);
    const rest = segments.slice(2);
    if (rest[0] === 'hourly') out.push('hourly', ...rest.slice(1).map(() => '{id}'));
    else if (rest.length === 1) out.push('{id}');
    else out.push('{token}', ...rest.slice(1));
    return `/${out.join('/')}`;
  }
  // private scanning mirrors the public routes under /private (`/private/files/{id}`)
  if (segments[0] === 'private') {
    out.push('private');
    i = 1;
  }
  for (; i < segments.length; i++) {
    const seg = segments[i] as string;
    const next = segments[i + 1];
    if (OBJECT_COLLECTIONS.has(seg) && next !== undefined && !ROUTES_UNDER[seg]?.has(next)) {
      out.push(seg, '{id}');
      i += 1;
    } else out.push(ID_SEGMENT.test(seg) ? '{id}' : seg);
  }
  return `/${out.join('/')}`;
}
