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
  const route = path
    .split('/')
    .map((seg) => (ID_SEGMENT.test(decodeURIComponent(seg)) ? '{id}' : seg))
    .join('/');
  return `${op.method.toUpperCase()} ${route}`;
}
