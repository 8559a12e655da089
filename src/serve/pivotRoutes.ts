import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { canonicalBehaviourId } from '../normalize/index.js';
import { HUNT_LIMITS, pivotKindOf, type Store } from '../store/index.js';
import { decodeHitCursor, encodeHitCursor, isFileHash, parseLimit, type V3ErrorCode } from './envelope.js';
import { decodePivotCursor, encodePivotCursor, pivotPage } from './pivotPage.js';

/** The longest path segment the API routes (behaviour ids run to sandbox names of any length). */
export const MAX_PARAM_LENGTH = 2048;
/** An epoch `since` this large is in milliseconds (after 1973 in ms, after year 5138 in seconds). */
const MS_FROM = 1e11;

export interface PivotRouteOptions {
  store: Store;
  fail: (reply: FastifyReply, code: V3ErrorCode, message: string) => FastifyReply;
  /** A sandtrail object of the v3 envelope, its self link under /api/v3/sandtrail/. */
  object: (req: FastifyRequest, type: string, id: string, attributes: unknown, path: string) => Record<string, unknown>;
  /** A page's `self` and `next` links, `path` under the API's base. */
  pageLinks: (
    req: FastifyRequest,
    path: string,
    query: Record<string, string | undefined>,
    next: string | undefined,
  ) => { self: string; next?: string };
}

/**
 * Where a pivot value is read: a path segment when one can carry it, else the query (`.` and `..`
 * are resolved away by every URL parser, even percent-encoded; a segment is at most MAX_PARAM_LENGTH).
 */
function pivotPath(kind: string, value: string): { path: string; query: Record<string, string> } {
  const segment = encodeURIComponent(value);
  return value === '.' || value === '..' || segment.length > MAX_PARAM_LENGTH
    ? { path: `pivots/${kind}`, query: { value } }
    : { path: `pivots/${kind}/${segment}`, query: {} };
}

/** pivotPath as one relative URL. */
function pivotHref(kind: string, value: string): string {
  const { path, query } = pivotPath(kind, value);
  return query.value === undefined ? path : `${path}?${new URLSearchParams(query).toString()}`;
}

/**
 * sandtrail's own reads under /api/v3/sandtrail/: a value's pivot statistics and behaviours
 * (cursor paging through the store's window), the top values of a kind, related behaviours, a
 * file's roll-up and a watch's hits.
 */
export function registerPivotRoutes(app: FastifyInstance, o: PivotRouteOptions): void {
  const { store, fail, object: sandtrail, pageLinks } = o;
  // a kind in its stored spelling (sigma_rule_id) or the command line's (sigma-rule)
  const KINDS = 'behash, sigma_rule_id (or sigma-rule), ja3, ja3s, dropped_sha256 (or dropped-sha256)';
  type PivotQuery = { limit?: string; cursor?: string; value?: string };
  const pivotRoute = async (req: FastifyRequest<{ Querystring: PivotQuery }>, reply: FastifyReply, kindRaw: string, value: string) => {
    const kind = pivotKindOf(kindRaw);
    if (!kind) return fail(reply, 'InvalidArgumentError', `pivot kind must be one of ${KINDS}, sha256`);
    const limit = parseLimit(req.query.limit);
    if (limit === null) return fail(reply, 'InvalidArgumentError', 'limit must be an integer between 1 and 40');
    // the last behaviour the previous page gave: behaviours stored or expired meanwhile move no page
    const anchor = req.query.cursor === undefined ? undefined : decodePivotCursor(req.query.cursor);
    if (anchor === null) return fail(reply, 'InvalidArgumentError', 'Invalid cursor');
    // the stores page through the newest 10,000 of a value's behaviours: a cursor past them is
    // refused, not answered with another page, and the last page ends at the window
    const window = HUNT_LIMITS.window;
    if (anchor && anchor.offset >= window)
      return fail(reply, 'InvalidArgumentError', `cursor past the first ${window} behaviours of a value, the window pivots page through`);
    const { stats, start } = await pivotPage(store.hunt, kind, value, limit, anchor);
    const after = Math.min(start + stats.newest.length, window);
    const last = stats.newest[stats.newest.length - 1];
    const more = last !== undefined && after < stats.behaviours && after < window;
    // the value as the store compares it (hashes lower-case), in the id and links alike
    const { path, query } = pivotPath(kind, stats.value);
    const next = more ? encodePivotCursor({ offset: after, date: last.analysis_date, id: last.id }) : undefined;
    return {
      data: sandtrail(req, 'sandtrail_pivot', `${kind}:${stats.value}`, stats, pivotHref(kind, stats.value)),
      meta: {
        ...(next ? { cursor: next } : {}),
        // more behaviours than any page reaches: the total is in attributes.behaviours
        ...(after >= window && after < stats.behaviours ? { window_end: true } : {}),
      },
      links: pageLinks(req, `sandtrail/${path}`, { ...query, limit: req.query.limit, cursor: req.query.cursor }, next),
    };
  };
  app.get<{ Params: { kind: string; value: string }; Querystring: PivotQuery }>('/api/v3/sandtrail/pivots/:kind/:value', (req, reply) =>
    pivotRoute(req, reply, req.params.kind, req.params.value),
  );
  // any stored value by query: one a path segment cannot carry (`.`, `..`, longer than a segment may be)
  app.get<{ Params: { kind: string }; Querystring: PivotQuery }>('/api/v3/sandtrail/pivots/:kind', (req, reply) =>
    req.query.value === undefined
      ? fail(reply, 'InvalidArgumentError', 'the value to pivot on is missing: /pivots/KIND/VALUE or /pivots/KIND?value=VALUE')
      : pivotRoute(req, reply, req.params.kind, req.query.value),
  );

  app.get<{ Params: { kind: string }; Querystring: { since?: string; limit?: string } }>(
    '/api/v3/sandtrail/top/:kind',
    async (req, reply) => {
      const kind = pivotKindOf(req.params.kind);
      if (!kind || kind === 'sha256') return fail(reply, 'InvalidArgumentError', `pivot kind must be one of ${KINDS}`);
      const limit = parseLimit(req.query.limit);
      if (limit === null) return fail(reply, 'InvalidArgumentError', 'limit must be an integer between 1 and 40');
      const sinceRaw = epochParam(req.query.since);
      if (sinceRaw === null) return fail(reply, 'InvalidArgumentError', 'since must be epoch seconds (or milliseconds)');
      // 12 digits or more are milliseconds, as the watch hits route reads them
      const since = sinceRaw !== undefined && sinceRaw >= MS_FROM ? Math.floor(sinceRaw / 1000) : sinceRaw;
      const top = await store.hunt.top(kind, { since, limit });
      return {
        data: top.map((t) => sandtrail(req, 'sandtrail_pivot', `${kind}:${t.value}`, t, pivotHref(kind, t.value))),
      };
    },
  );

  app.get<{ Params: { id: string }; Querystring: { limit?: string } }>('/api/v3/sandtrail/related/:id', async (req, reply) => {
    const limit = parseLimit(req.query.limit, 20);
    if (limit === null) return fail(reply, 'InvalidArgumentError', 'limit must be an integer between 1 and 40');
    const related = await store.hunt.related(canonicalBehaviourId(req.params.id), { limit });
    if (!related) return fail(reply, 'NotFoundError', `File behaviour "${req.params.id}" not found`);
    return { data: sandtrail(req, 'sandtrail_related', related.id, related, `related/${encodeURIComponent(related.id)}`) };
  });

  app.get<{ Params: { hash: string } }>('/api/v3/sandtrail/files/:hash', async (req, reply) => {
    if (!isFileHash(req.params.hash)) return fail(reply, 'InvalidArgumentError', `"${req.params.hash}" is not a valid file hash`);
    const roll = await store.hunt.fileRollup(req.params.hash);
    if (!roll) return fail(reply, 'NotFoundError', `File "${req.params.hash}" not found`);
    return { data: sandtrail(req, 'sandtrail_file', roll.sha256, roll, `files/${roll.sha256}`) };
  });

  app.get<{ Params: { name: string }; Querystring: { since?: string; limit?: string; cursor?: string } }>(
    '/api/v3/sandtrail/watches/:name/hits',
    async (req, reply) => {
      const watch = await store.watches.get(req.params.name);
      if (!watch) return fail(reply, 'NotFoundError', `Watch "${req.params.name}" not found`);
      const limit = parseLimit(req.query.limit);
      if (limit === null) return fail(reply, 'InvalidArgumentError', 'limit must be an integer between 1 and 40');
      // the last hit a page gave: hits recorded meanwhile (newest first) move no page
      const after = req.query.cursor === undefined ? undefined : decodeHitCursor(req.query.cursor);
      if (after === null) return fail(reply, 'InvalidArgumentError', 'Invalid cursor');
      const sinceRaw = epochParam(req.query.since);
      if (sinceRaw === null) return fail(reply, 'InvalidArgumentError', 'since must be epoch seconds (or milliseconds)');
      // epoch seconds, as `top` takes; 12 digits or more (after 1973 in milliseconds, after 5138 in
      // seconds) are milliseconds, the unit hits are kept in and the first form this route took
      const since = sinceRaw !== undefined && sinceRaw < MS_FROM ? sinceRaw * 1000 : sinceRaw;
      // one more than asked says whether a next page exists
      const hits = await store.watches.hits(watch.name, { since, limit: limit + 1, ...(after ? { after } : {}) });
      const more = hits.length > limit;
      const path = `watches/${encodeURIComponent(watch.name)}/hits`;
      const lastGiven = hits[limit - 1];
      const next = more && lastGiven ? encodeHitCursor(lastGiven) : undefined;
      return {
        data: hits
          .slice(0, limit)
          .map((h) => sandtrail(req, 'sandtrail_watch_hit', `${h.watch}:${h.behaviourId}:${h.lastModified}`, h, path)),
        meta: next ? { cursor: next } : {},
        links: pageLinks(req, `sandtrail/${path}`, { limit: req.query.limit, since: req.query.since, cursor: req.query.cursor }, next),
      };
    },
  );
}

/** A `since` parameter: absent, or whole digits (an empty or loose value is an error, not 0). */
function epochParam(raw: string | undefined): number | undefined | null {
  if (raw === undefined) return undefined;
  return /^\d{1,16}$/.test(raw) ? Number(raw) : null;
}
