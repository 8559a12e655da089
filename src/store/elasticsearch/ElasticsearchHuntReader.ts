import type { Client, estypes } from '@elastic/elasticsearch';
import {
  HUNT_LIMITS,
  boundedInt,
  byKindThenValue,
  nameCounts,
  pageOf,
  type BehaviourLine,
  type FileRollup,
  type HuntReader,
  type PivotStats,
  type PivotSummary,
  type RelatedBehaviours,
  type Timeline,
} from '../HuntReader.js';
import { fileHashKind, rollupFile } from '../rollupFile.js';
import { PIVOT_KINDS, pivotKey, type PivotKind } from '../Sink.js';
import { verdictsOf } from '../../wire/index.js';
import { isIndexNotFound, readFailure } from './classify.js';
import { PIVOT_FIELDS, topValuesTerms } from './mapping.js';
import { esNames, type EsNames } from './names.js';
import { ECS_ROOTS, stripProjection } from './project.js';

type ValueKind = Exclude<PivotKind, 'sha256'>;
type Source = Record<string, unknown>;
type Aggs = Record<string, estypes.AggregationsAggregate | undefined>;

/** Distinct sandbox or verdict names one summary lists: far more than the feed has. */
const NAMES = 1000;
/** Cardinality is exact up to this many distinct files (HyperLogLog++ above it: Elasticsearch's cap). */
const EXACT_FILES = 40_000;
/** Fields of a BehaviourLine in `_source`. */
const LINE_SOURCE = ['id', 'sha256', 'sandbox_name', 'analysis_date', 'attributes.verdicts'];
/** Newest first (a report without analysis_date last), then by id: SQLite's `analysis_date DESC, id`. */
const NEWEST: estypes.SortCombinations[] = [{ analysis_date: { order: 'desc', missing: '_last' } }, { id: { order: 'asc' } }];
const FILE_HASH_FIELDS = { sha256: 'sha256', md5: 'context_attributes.file_md5', sha1: 'context_attributes.file_sha1' } as const;

/** The sub-aggregations one summary is read from (the same at the top level and under a `top` bucket). */
const SUMMARY_AGGS: Record<string, estypes.AggregationsAggregationContainer> = {
  files: { cardinality: { field: 'sha256', precision_threshold: EXACT_FILES } },
  sandboxes: { terms: { field: 'sandbox_name', size: NAMES } },
  verdicts: { terms: { field: 'attributes.verdicts', size: NAMES } },
  first: { min: { field: 'analysis_date' } },
  last: { max: { field: 'analysis_date' } },
};

const term = (kind: PivotKind, value: string): estypes.QueryDslQueryContainer => ({ term: { [PIVOT_FIELDS[kind]]: value } });

function buckets(agg: estypes.AggregationsAggregate | undefined): estypes.AggregationsStringTermsBucket[] {
  const b = (agg as estypes.AggregationsStringTermsAggregate | undefined)?.buckets;
  return Array.isArray(b) ? b : [];
}

/** A date aggregate (epoch millis) as the documents' epoch seconds; null without values. */
function seconds(agg: estypes.AggregationsAggregate | undefined): number | null {
  const v = (agg as estypes.AggregationsSingleMetricAggregateBase | undefined)?.value;
  return typeof v === 'number' && Number.isFinite(v) ? Math.floor(v / 1000) : null;
}

function summaryOf(kind: PivotKind, value: string, behaviours: number, aggs: Aggs | undefined): PivotSummary {
  const a = aggs ?? {};
  return {
    kind,
    value,
    behaviours,
    files: behaviours === 0 ? 0 : Number((a.files as estypes.AggregationsCardinalityAggregate | undefined)?.value ?? 0),
    sandboxes: nameCounts(buckets(a.sandboxes).map((b) => [String(b.key), b.doc_count] as const)),
    verdicts: nameCounts(buckets(a.verdicts).map((b) => [String(b.key), b.doc_count] as const)),
    firstSeen: seconds(a.first),
    lastSeen: seconds(a.last),
  };
}

function lineOf(src: Source | undefined): BehaviourLine {
  const s = src ?? {};
  return {
    id: String(s.id),
    sha256: String(s.sha256),
    sandbox_name: String(s.sandbox_name),
    verdicts: verdictsOf(s.attributes),
    analysis_date: typeof s.analysis_date === 'number' ? s.analysis_date : null,
  };
}

/** A document's pivot values in lookup form, unique, in PIVOT_KINDS order then by value. */
function pivotValues(src: Source | undefined): { kind: ValueKind; value: string }[] {
  const p = (src?.pivots ?? {}) as Record<string, unknown>;
  const seen = new Map<string, { kind: ValueKind; value: string }>();
  const add = (kind: ValueKind, v: unknown): void => {
    if (typeof v !== 'string' || pivotKey(v) === '') return;
    const value = pivotKey(v);
    seen.set(`${kind}\u0000${value}`, { kind, value });
  };
  add('behash', p.behash);
  const lists: [ValueKind, string][] = [
    ['sigma_rule_id', 'sigma_rule_ids'],
    ['ja3', 'ja3'],
    ['ja3s', 'ja3s'],
    ['dropped_sha256', 'dropped_sha256'],
  ];
  for (const [kind, key] of lists) for (const v of Array.isArray(p[key]) ? p[key] : []) add(kind, v);
  return [...seen.values()].sort(byKindThenValue);
}

/**
 * The hunting reads of the Elasticsearch store: each question is one search with aggregations
 * over the behaviour alias (`related` and a rollup by MD5/SHA-1 take two), so the figures come
 * from the indexed documents as they are, replays and stale writes included. Searches see what
 * has been refreshed (`index.refresh_interval`). Distinct files are a cardinality aggregation,
 * exact up to 40,000 files per value.
 */
export class ElasticsearchHuntReader implements HuntReader {
  readonly names: EsNames;

  constructor(
    private readonly client: Client,
    o: { prefix?: string } = {},
  ) {
    this.names = esNames(o.prefix);
  }

  /** One search through the alias; a missing index reads as no documents (`undefined`). */
  private async search(what: string, body: estypes.SearchRequest): Promise<estypes.SearchResponse<Source> | undefined> {
    try {
      return await this.client.search<Source>({ index: this.names.alias, allow_partial_search_results: false, ...body });
    } catch (err) {
      if (isIndexNotFound(err)) return undefined;
      throw readFailure(`Elasticsearch hunt ${what}`, err);
    }
  }

  async pivotStats(kind: PivotKind, value: string, page?: { limit?: number; offset?: number }): Promise<PivotStats> {
    const key = pivotKey(value);
    const { limit, offset } = pageOf(page);
    const r =
      key === ''
        ? undefined
        : await this.search('pivot stats', {
            query: term(kind, key),
            track_total_hits: true,
            size: limit,
            from: offset,
            sort: NEWEST,
            _source: LINE_SOURCE,
            aggs: SUMMARY_AGGS,
          });
    const total = r?.hits.total;
    const behaviours = typeof total === 'number' ? total : (total?.value ?? 0);
    return {
      ...summaryOf(kind, key, behaviours, r?.aggregations),
      newest: (r?.hits.hits ?? []).map((h) => lineOf(h._source)),
      offset,
      limit,
    };
  }

  async top(kind: ValueKind, opts: { since?: number; limit?: number } = {}): Promise<PivotSummary[]> {
    const limit = boundedInt(opts.limit, HUNT_LIMITS.top.default, HUNT_LIMITS.top.max);
    if (limit === 0) return [];
    const since = typeof opts.since === 'number' && Number.isFinite(opts.since) ? opts.since : undefined;
    const r = await this.search('top', {
      size: 0,
      track_total_hits: false,
      query: since === undefined ? { match_all: {} } : { range: { analysis_date: { gte: since, format: 'epoch_second' } } },
      aggs: {
        top: {
          terms: topValuesTerms(kind, limit),
          aggs: SUMMARY_AGGS,
        },
      },
    });
    return buckets(r?.aggregations?.top).map((b) => summaryOf(kind, String(b.key), b.doc_count, b as unknown as Aggs));
  }

  async related(id: string, opts: { limit?: number } = {}): Promise<RelatedBehaviours | null> {
    const limit = boundedInt(opts.limit, HUNT_LIMITS.related.default, HUNT_LIMITS.related.max);
    const self = await this.search('related', { query: { ids: { values: [id] } }, size: 1, _source: ['pivots'], track_total_hits: false });
    const hit = self?.hits.hits[0];
    if (!hit) return null;
    const own = pivotValues(hit._source);
    if (own.length === 0) return { id, values: [], related: [] };
    // one search: the score of a behaviour is how many of the values it shares (one constant
    // score of 1 per value matched), so hits sorted by score are the ranking; a filters
    // aggregation counts, per value, the other behaviours holding it
    const r = await this.search('related', {
      query: {
        bool: {
          should: own.map((v) => ({ constant_score: { filter: term(v.kind, v.value), boost: 1 } })),
          minimum_should_match: 1,
          must_not: [{ ids: { values: [id] } }],
        },
      },
      size: limit,
      track_total_hits: false,
      sort: [{ _score: { order: 'desc' } }, ...NEWEST],
      _source: [...LINE_SOURCE, 'pivots'],
      aggs: { others: { filters: { filters: Object.fromEntries(own.map((v, i) => [String(i), term(v.kind, v.value)])) } } },
    });
    const counts = ((r?.aggregations?.others as estypes.AggregationsFiltersAggregate | undefined)?.buckets ?? {}) as Record<
      string,
      { doc_count: number }
    >;
    const mine = new Set(own.map((v) => `${v.kind}\u0000${v.value}`));
    return {
      id,
      values: own.map((v, i) => ({ ...v, others: counts[String(i)]?.doc_count ?? 0 })),
      related: (r?.hits.hits ?? []).map((h) => ({
        ...lineOf(h._source),
        shared: pivotValues(h._source).filter((v) => mine.has(`${v.kind}\u0000${v.value}`)),
      })),
    };
  }

  async fileRollup(hash: string): Promise<FileRollup | null> {
    const h = typeof hash === 'string' ? fileHashKind(hash) : undefined;
    if (!h) return null;
    let sha256: string | undefined = h.value;
    if (h.kind !== 'sha256') {
      // an MD5 or SHA-1 names its file's SHA-256; the rollup then holds every report of that file
      const r = await this.search('file rollup', {
        query: { term: { [FILE_HASH_FIELDS[h.kind]]: h.value } },
        size: 1,
        sort: [{ sha256: { order: 'asc' } }],
        _source: ['sha256'],
        track_total_hits: false,
      });
      const s = r?.hits.hits[0]?._source?.sha256;
      sha256 = typeof s === 'string' ? s : undefined;
    }
    if (sha256 === undefined) return null;
    const r = await this.search('file rollup', {
      query: { term: { sha256 } },
      size: HUNT_LIMITS.reports,
      sort: [{ id: { order: 'asc' } }],
      _source: { excludes: [...ECS_ROOTS] },
      track_total_hits: false,
    });
    const docs = (r?.hits.hits ?? []).flatMap((x) => (x._source ? [stripProjection(x._source)] : []));
    return docs.length === 0 ? null : rollupFile(sha256, docs);
  }

  async timeline(kind: PivotKind, value: string, bucketSeconds: 3600 | 86400): Promise<Timeline> {
    const key = pivotKey(value);
    const r =
      key === ''
        ? undefined
        : await this.search('timeline', {
            query: term(kind, key),
            size: 0,
            track_total_hits: true,
            aggs: {
              t: { date_histogram: { field: 'analysis_date', fixed_interval: bucketSeconds === 3600 ? '1h' : '1d', min_doc_count: 1 } },
            },
          });
    const total = r?.hits.total;
    const behaviours = typeof total === 'number' ? total : (total?.value ?? 0);
    const counts = buckets(r?.aggregations?.t).map((b) => ({ t: Math.floor(Number(b.key) / 1000), count: b.doc_count }));
    return { bucketSeconds, counts, undated: behaviours - counts.reduce((n, c) => n + c.count, 0) };
  }

  async valueSummaries(kind: PivotKind, values: readonly string[]): Promise<PivotSummary[]> {
    const keys = [...new Set(values.slice(0, HUNT_LIMITS.top.max).map(pivotKey))].filter((v) => v !== '');
    const r =
      keys.length === 0
        ? undefined
        : await this.search('value summaries', {
            size: 0,
            track_total_hits: false,
            query: { terms: { [PIVOT_FIELDS[kind]]: keys } },
            aggs: { v: { terms: { field: PIVOT_FIELDS[kind], include: keys, size: keys.length }, aggs: SUMMARY_AGGS } },
          });
    const found = new Map(buckets(r?.aggregations?.v).map((b) => [String(b.key), b]));
    return values.slice(0, HUNT_LIMITS.top.max).map((v) => {
      const b = found.get(pivotKey(v));
      return summaryOf(kind, pivotKey(v), b?.doc_count ?? 0, b as unknown as Aggs | undefined);
    });
  }

  async cooccurring(kind: PivotKind, value: string, limit = 10): Promise<{ kind: PivotKind; value: string; behaviours: number }[]> {
    const key = pivotKey(value);
    const n = boundedInt(limit, 10, HUNT_LIMITS.top.max);
    const others = PIVOT_KINDS.filter((k) => k !== kind && k !== 'sha256');
    const r =
      key === '' || n === 0
        ? undefined
        : await this.search('co-occurring values', {
            size: 0,
            track_total_hits: false,
            query: term(kind, key),
            aggs: Object.fromEntries(others.map((k) => [k, { terms: topValuesTerms(k, n) }])),
          });
    return others.flatMap((k) => buckets(r?.aggregations?.[k]).map((b) => ({ kind: k, value: String(b.key), behaviours: b.doc_count })));
  }
}
