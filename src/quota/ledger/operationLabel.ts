import type { Operation } from '../policy/index.js';

/** Path segments that identify one object rather than an endpoint: hashes, minutes, numeric ids. */
const ID_SEGMENT = /^([0-9a-fA-F]{32,64}|\d{10,12}|\d+|[0-9a-fA-F]{64}_.+)$/;

/**
 * Groups operations for the ledger's per-operation view: API calls by method and route with ids
 * replaced by placeholders (`GET /feeds/file_behaviours/{id}`), other operations by their name.
 */
export function operationLabel(op: Operation): string {
  if (op.op !== 'api') return op.op;
  let path = op.path;
  try {
    if (/^https?:/.test(path)) path = new URL(path).pathname;
  } catch {
    // keep as given
  }
  path = path.split('?')[0] ?? path;
  path = path.replace(/^\/api\/v3(?=\/)/, '');
  const segments = path.split('/').map((seg) => (ID_SEGMENT.test(safeDecode(seg)) ? '{id}' : seg));
  // feed-line links (`/feeds/<feed>/<token>/<kind>`): one label per kind, not per batch token
  if (segments[1] === 'feeds' && segments.length === 5 && segments[3] !== 'hourly') segments[3] = '{token}';
  const route = segments.join('/');
  return `${op.method.toUpperCase()} ${route}`;
}

function safeDecode(seg: string): string {
  try {
    return decodeURIComponent(seg);
  } catch {
    return seg;
  }
}
