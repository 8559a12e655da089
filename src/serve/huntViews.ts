import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { pivotKindOf, type Store } from '../store/index.js';
import { parseLimit, type V3ErrorCode } from './envelope.js';
import { overviewOf } from './overview.js';

/** Where the page's charting library is served from (the package's own copy: no CDN). */
export const ASSET_PATH = '/assets/';
const HOUR = 3600;
const DAY = 86_400;
const KIND_ERROR = 'pivot kind must be one of behash, sigma_rule_id, ja3, ja3s, dropped_sha256, sha256';
/** A value whose behaviours span at most this is drawn per hour, else per day. */
const HOURLY_SPAN = 3 * DAY;

export interface HuntViewOptions {
  store: Store;
  fail: (reply: FastifyReply, code: V3ErrorCode, message: string) => FastifyReply;
  /** A sandtrail object of the v3 envelope, its self link under /api/v3/sandtrail/. */
  object: (req: FastifyRequest, type: string, id: string, attributes: unknown, path: string) => Record<string, unknown>;
}

/** uPlot's script and style, read once from the installed package (a kept library, served within the page's CSP). */
function assets(): Map<string, { type: string; body: Buffer }> {
  const require = createRequire(import.meta.url);
  const dir = require.resolve('uplot/dist/uPlot.iife.min.js').replace(/uPlot\.iife\.min\.js$/, '');
  return new Map([
    ['uplot.js', { type: 'text/javascript; charset=utf-8', body: readFileSync(`${dir}uPlot.iife.min.js`) }],
    ['uplot.css', { type: 'text/css; charset=utf-8', body: readFileSync(`${dir}uPlot.min.css`) }],
  ]);
}

/**
 * The reads behind the page's landing view and pictures: `/api/v3/sandtrail/overview` (the store,
 * its freshness, what is new in a window, watch hits, dead letters) and
 * `/api/v3/sandtrail/timeline/{kind}?value=V` (a value's behaviours per hour or day), both
 * aggregated by the store; and the charting library under /assets/.
 */
export function registerHuntViews(app: FastifyInstance, o: HuntViewOptions): void {
  const { store, fail } = o;
  const files = assets();
  app.get<{ Params: { name: string } }>(`${ASSET_PATH}:name`, async (req, reply) => {
    const f = files.get(req.params.name);
    if (!f) return fail(reply, 'NotFoundError', `Resource not found: ${ASSET_PATH}${req.params.name}`);
    return reply.type(f.type).header('cache-control', 'public, max-age=86400').send(f.body);
  });

  app.get<{ Querystring: { window?: string } }>('/api/v3/sandtrail/overview', async (req, reply) => {
    const raw = req.query.window;
    const seconds = raw === undefined ? DAY : /^\d{1,8}$/.test(raw) ? Number(raw) : Number.NaN;
    if (!(seconds >= HOUR && seconds <= 90 * DAY))
      return fail(reply, 'InvalidArgumentError', `window must be seconds between ${HOUR} (an hour) and ${90 * DAY} (90 days)`);
    const overview = await overviewOf(store, { windowSeconds: seconds });
    return { data: o.object(req, 'sandtrail_overview', 'overview', overview, `overview?window=${seconds}`) };
  });

  app.get<{ Params: { kind: string }; Querystring: { value?: string; limit?: string } }>(
    '/api/v3/sandtrail/cooccurring/:kind',
    async (req, reply) => {
      const kind = pivotKindOf(req.params.kind);
      if (!kind) return fail(reply, 'InvalidArgumentError', KIND_ERROR);
      const { value } = req.query;
      if (value === undefined || value === '') return fail(reply, 'InvalidArgumentError', 'the value is missing: ?value=V');
      const limit = parseLimit(req.query.limit, 10);
      if (limit === null) return fail(reply, 'InvalidArgumentError', 'limit must be an integer between 1 and 40');
      const values = await store.hunt.cooccurring(kind, value, limit);
      return {
        data: o.object(
          req,
          'sandtrail_cooccurring',
          `${kind}:${value}`,
          { kind, value, values },
          `cooccurring/${kind}?value=${encodeURIComponent(value)}`,
        ),
      };
    },
  );

  app.get<{ Params: { kind: string }; Querystring: { value?: string; bucket?: string } }>(
    '/api/v3/sandtrail/timeline/:kind',
    async (req, reply) => {
      const kind = pivotKindOf(req.params.kind);
      if (!kind)
        return fail(reply, 'InvalidArgumentError', 'pivot kind must be one of behash, sigma_rule_id, ja3, ja3s, dropped_sha256, sha256');
      const { value, bucket } = req.query;
      if (value === undefined || value === '') return fail(reply, 'InvalidArgumentError', 'the value is missing: ?value=V');
      if (bucket !== undefined && bucket !== 'hour' && bucket !== 'day')
        return fail(reply, 'InvalidArgumentError', 'bucket must be hour or day');
      const [summary] = await store.hunt.valueSummaries(kind, [value]);
      const span = summary?.firstSeen != null && summary.lastSeen != null ? summary.lastSeen - summary.firstSeen : 0;
      const seconds = bucket === 'hour' || (bucket === undefined && span <= HOURLY_SPAN) ? HOUR : DAY;
      const t = await store.hunt.timeline(kind, value, seconds);
      const attributes = { kind, value: summary?.value ?? value, behaviours: summary?.behaviours ?? 0, ...t };
      return {
        data: o.object(
          req,
          'sandtrail_timeline',
          `${kind}:${attributes.value}`,
          attributes,
          `timeline/${kind}?value=${encodeURIComponent(attributes.value)}`,
        ),
      };
    },
  );
}
