import { apiError, type ErrorBody } from './exchange.js';

export const DEFAULT_LIMIT = 10;
export const MAX_LIMIT = 40;

/** Opaque to clients: base64url of `o<offset>`. */
export const encodeCursor = (offset: number): string => Buffer.from(`o${offset}`).toString('base64url');

function decodeCursor(cursor: string): number | null {
  const m = /^o(0|[1-9]\d{0,8})$/.exec(Buffer.from(cursor, 'base64url').toString('latin1'));
  if (!m || encodeCursor(Number(m[1])) !== cursor) return null;
  return Number(m[1]);
}

/** A page of a collection as the API shapes it. */
export interface CollectionPage {
  data: unknown[];
  meta: { count: number; cursor?: string };
  links: { self: string; next?: string };
}

/**
 * The page of `items` that `self`'s `limit` (default 10, 1..40) and `cursor` ask for, or the 400
 * InvalidArgumentError the API answers to a bad limit or cursor. `self` is the full request URL;
 * `links.next` is it with the next cursor.
 */
export function collectionPage(items: readonly unknown[], self: URL): { page: CollectionPage } | { error: ErrorBody } {
  const rawLimit = self.searchParams.get('limit');
  const limit = rawLimit === null ? DEFAULT_LIMIT : /^\d{1,3}$/.test(rawLimit) ? Number(rawLimit) : NaN;
  if (!(limit >= 1 && limit <= MAX_LIMIT))
    return { error: apiError('InvalidArgumentError', `limit must be an integer between 1 and ${MAX_LIMIT}, got ${rawLimit}`) };
  const rawCursor = self.searchParams.get('cursor');
  const offset = rawCursor === null || rawCursor === '' ? 0 : decodeCursor(rawCursor);
  if (offset === null) return { error: apiError('InvalidArgumentError', `Wrong cursor: ${rawCursor}`) };
  const page: CollectionPage = { data: items.slice(offset, offset + limit), meta: { count: items.length }, links: { self: self.href } };
  if (offset + limit < items.length) {
    const cursor = encodeCursor(offset + limit);
    const next = new URL(self);
    next.searchParams.set('cursor', cursor);
    next.searchParams.set('limit', String(limit));
    page.meta.cursor = cursor;
    page.links.next = next.href;
  }
  return { page };
}
