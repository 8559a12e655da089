/**
 * Index design for hunters' pivots. Everything here is plain JSON sent as-is by setupElasticsearch
 * (and shown by its dry run), so the tests can assert it exactly.
 *
 * Decisions (docs/elasticsearch.md summarizes them for operators):
 * - `dynamic: false` at the root: a new upstream field is kept in `_source` (so `get` still returns
 *   it) but never creates a mapping, so the feed can never cause a mapping explosion. Fields are
 *   indexed only when listed here.
 * - Every pivot and identifier is `keyword`. Hashes and hash-like ids go through the
 *   `sandtrail_lowercase` normalizer, applied at index time AND to term queries, so `Sig-1`,
 *   `SIG-1` and `sig-1` are the same value (the canonical document keeps sigma rule ids in their
 *   original case; the other pivots are already lower-case). Only `lowercase` is used: `trim`
 *   is not accepted in normalizers before 8.9 and the normalizer already trims pivots.
 * - `ignore_above` on every keyword: one absurd value (a 40 KB "hash") is skipped for that field
 *   instead of failing the whole document with an "immense term" error.
 * - `ignore_malformed` on ip / date / numeric fields: one bad upstream value must not cost the
 *   hunter the rest of the report (the value stays in `_source`).
 * - ECS-aligned top-level fields (`file.hash.*`, `tls.client.ja3`, `tls.server.ja3s`,
 *   `threat.technique.id`, `rule.id`, `dns.question.name`, `destination.ip`, `related.*`,
 *   `event.*`, `@timestamp`) are a projection the sink adds at write time and strips on read;
 *   their roots are ECS_ROOTS in project.ts and cannot collide with the canonical document's
 *   top-level keys (schema_version, id, sha256, sandbox_name, dates, attributes,
 *   context_attributes, relationships, pivots).
 * - `nested` is used once, for `attributes.dns_lookups`: "hostname H resolved to IP X" needs
 *   hostname and resolved_ips to match in the same lookup, which an object array cannot express
 *   (it flattens all hostnames and all IPs of a report into two unrelated lists). Every other
 *   list (tls, files_dropped, ids_alerts, sigma results...) is pivoted on one value at a time,
 *   so plain objects are enough and cheaper (no hidden Lucene document per element); the flat
 *   `dns.question.name` / `related.ip` projections keep DNS pivots usable in Kibana, whose
 *   visualizations do not aggregate nested fields.
 * - Wide string maps whose keys are data, not schema (registry keys set, exiftool, HTTP
 *   headers, certificate issuer/subject, IDS alert context) are `flattened`: one field each,
 *   every leaf searchable as a keyword. The process tree (recursive) and `relationships` are
 *   `enabled: false`: kept in `_source`, not parsed.
 * - Dates are epoch seconds in the canonical document and are mapped `date` with
 *   `format: epoch_second`, so nothing is rewritten.
 */
import type { PivotKind } from '../Sink.js';

/**
 * Bumped whenever the mappings, settings or templates change; stored as the templates' `version`.
 * 2: daily behaviour partitions (the index template's lifecycle policy and read alias).
 */
export const MAPPING_VERSION = 2;

export const NORMALIZER = 'sandtrail_lowercase';

const keyword = { type: 'keyword', ignore_above: 1024 } as const;
const longKeyword = { type: 'keyword', ignore_above: 8191 } as const;
const hash = { type: 'keyword', normalizer: NORMALIZER, ignore_above: 1024 } as const;
const ip = { type: 'ip', ignore_malformed: true } as const;
const epochSecond = { type: 'date', format: 'epoch_second', ignore_malformed: true } as const;
const epochMillis = { type: 'date', format: 'epoch_millis', ignore_malformed: true } as const;
const integer = { type: 'integer', ignore_malformed: true } as const;
const long = { type: 'long', ignore_malformed: true } as const;
const flattened = { type: 'flattened', ignore_above: 1024 } as const;
const disabled = { type: 'object', enabled: false } as const;

/** The keyword field each pivot kind is queried and aggregated on. */
export const PIVOT_FIELDS: Readonly<Record<PivotKind, string>> = Object.freeze({
  behash: 'pivots.behash',
  sigma_rule_id: 'pivots.sigma_rule_ids',
  ja3: 'pivots.ja3',
  ja3s: 'pivots.ja3s',
  dropped_sha256: 'pivots.dropped_sha256',
  sha256: 'file.hash.sha256',
});

/** The terms aggregation of a pivot's most frequent values, most frequent first, ties by value. */
export function topValuesTerms(kind: PivotKind, size: number): Record<string, unknown> {
  return {
    field: PIVOT_FIELDS[kind],
    size,
    // exact on one shard; with more, a larger shard_size keeps the top list accurate
    shard_size: Math.max(size * 5, 100),
    order: [{ _count: 'desc' }, { _key: 'asc' }],
  };
}

/** Replicas of an index: a number, or `auto`: 1 once the cluster has two data nodes, 0 on one. */
export type Replicas = number | 'auto';

/**
 * The replica settings of `r` (default auto): `index.auto_expand_replicas: 0-1` lets one node run
 * green and gives a cluster of several one copy of every shard, without a setting to change.
 */
export function replicaSettings(r: Replicas | undefined): Record<string, unknown> {
  return r === undefined || r === 'auto' ? { auto_expand_replicas: '0-1' } : { number_of_replicas: r };
}

/** The replicas `r` gives on a cluster of `dataNodes` data nodes. */
export function effectiveReplicas(r: Replicas | undefined, dataNodes: number): number {
  return r === undefined || r === 'auto' ? Math.min(1, Math.max(0, dataNodes - 1)) : r;
}

export interface BehaviourIndexSettings {
  shards?: number;
  replicas?: Replicas;
  /** `index.refresh_interval`; lower means fresher searches and slower bulk loads. */
  refreshInterval?: string;
  /** Total mapped fields allowed; with `dynamic: false` only the fields below count. */
  totalFieldsLimit?: number;
}

/** The analysis settings defining NORMALIZER, needed by every index that maps a hash. */
export function hashAnalysis(): Record<string, unknown> {
  return { normalizer: { [NORMALIZER]: { type: 'custom', char_filter: [], filter: ['lowercase'] } } };
}

/** Settings component template: analysis, shard layout and the mapping safety limits. */
export function behaviourSettings(o: BehaviourIndexSettings = {}): Record<string, unknown> {
  const index: Record<string, unknown> = {
    // one index per day, one primary up to ~5 M behaviours a day (8.6 GB of primary store a million)
    number_of_shards: o.shards ?? 1,
    ...replicaSettings(o.replicas),
    refresh_interval: o.refreshInterval ?? '5s',
    // behaviour reports are large and repetitive JSON; reads are rare compared to writes
    codec: 'best_compression',
    mapping: {
      total_fields: { limit: o.totalFieldsLimit ?? 2000 },
      depth: { limit: 20 },
      nested_fields: { limit: 10 },
      // one nested document per DNS lookup; a report above this is rejected (dead-lettered), not truncated
      nested_objects: { limit: 10000 },
    },
  };
  return { index, analysis: hashAnalysis() };
}

/** Mappings component template for behaviour documents. */
export function behaviourMappings(): Record<string, unknown> {
  return {
    dynamic: false,
    // `_source` keeps the whole canonical document (plus the projection the sink strips on read)
    _source: { enabled: true },
    _meta: { managed_by: 'sandtrail', mapping_version: MAPPING_VERSION },
    properties: {
      // ---- canonical document --------------------------------------------------------------
      schema_version: { type: 'short' },
      // `_id` cannot be sorted on in 8.x (fielddata on _id is disabled): this doc-values copy
      // is the unique, immutable sort key that `query` pages on with search_after.
      id: { type: 'keyword' },
      sha256: hash,
      sandbox_name: keyword,
      analysis_date: epochSecond,
      last_modification_date: epochSecond,
      pivots: {
        properties: {
          behash: hash,
          sigma_rule_ids: hash,
          ja3: hash,
          ja3s: hash,
          dropped_sha256: hash,
        },
      },
      attributes: {
        properties: {
          verdicts: keyword,
          verdict_confidence: integer,
          tags: keyword,
          mutexes_created: keyword,
          mutexes_opened: keyword,
          // behaviour lists hunters filter on by exact value or prefix (paths, command lines, modules)
          command_executions: longKeyword,
          processes_created: longKeyword,
          processes_injected: longKeyword,
          files_written: longKeyword,
          files_deleted: longKeyword,
          files_opened: longKeyword,
          modules_loaded: longKeyword,
          registry_keys_opened: longKeyword,
          registry_keys_deleted: longKeyword,
          services_created: keyword,
          crypto_algorithms_observed: keyword,
          registry_keys_set: flattened,
          exiftool: flattened,
          files_dropped: { properties: { path: longKeyword, sha256: hash, type: keyword } },
          dns_lookups: { type: 'nested', properties: { hostname: hash, resolved_ips: ip } },
          http_conversations: {
            properties: { url: longKeyword, request_method: keyword, request_headers: flattened },
          },
          ip_traffic: {
            properties: { destination_ip: ip, destination_port: integer, transport_layer_protocol: keyword },
          },
          tls: {
            properties: {
              ja3: hash,
              ja3s: hash,
              sni: hash,
              thumbprint: hash,
              serial_number: hash,
              version: keyword,
              issuer: flattened,
              subject: flattened,
            },
          },
          ids_alerts: {
            properties: {
              rule_id: hash,
              rule_msg: longKeyword,
              rule_category: keyword,
              rule_source: keyword,
              alert_severity: keyword,
              alert_context: flattened,
            },
          },
          sigma_analysis_results: {
            properties: {
              rule_id: hash,
              rule_title: longKeyword,
              rule_level: keyword,
              rule_source: keyword,
              rule_author: keyword,
              match_context: disabled,
            },
          },
          signature_matches: {
            properties: { name: longKeyword, format: keyword, rule_src: keyword, authors: keyword },
          },
          mitre_attack_techniques: {
            properties: { id: hash, severity: keyword, signature_description: longKeyword },
          },
          processes_tree: disabled,
        },
      },
      context_attributes: {
        properties: { file_md5: hash, file_sha1: hash, file_type_tag: keyword },
      },
      relationships: disabled,

      // ---- ECS projection (added by the sink, stripped on read) ------------------------------
      '@timestamp': epochSecond,
      event: { properties: { kind: keyword, category: keyword, dataset: keyword, module: keyword } },
      file: { properties: { hash: { properties: { sha256: hash, md5: hash, sha1: hash } } } },
      tls: {
        properties: {
          client: { properties: { ja3: hash, server_name: hash } },
          server: { properties: { ja3s: hash } },
        },
      },
      threat: {
        properties: {
          framework: keyword,
          technique: { properties: { id: hash } },
        },
      },
      rule: { properties: { id: hash } },
      dns: { properties: { question: { properties: { name: hash } } } },
      destination: { properties: { ip } },
      related: { properties: { hash, ip, hosts: hash } },
    },
  };
}

/** Dead-letter index: one document per dead letter, `_id` = its deterministic id. */
export function deadLetterMappings(): Record<string, unknown> {
  return {
    dynamic: false,
    _meta: { managed_by: 'sandtrail', mapping_version: MAPPING_VERSION },
    properties: {
      id: { type: 'keyword' },
      stage: keyword,
      batch: keyword,
      line: { type: 'long' },
      docId: keyword,
      code: keyword,
      path: longKeyword,
      message: { type: 'text' },
      // `raw` is kept in `_source` only: never searched, possibly megabytes
      rawEncoding: keyword,
      rawSize: { type: 'long' },
      rawSha256: { type: 'keyword' },
      rawTruncated: { type: 'boolean' },
      createdAt: epochMillis,
      updatedAt: epochMillis,
    },
  };
}

/** Batch-log index: one document per feed minute, `_id` = the minute. */
export function batchMappings(): Record<string, unknown> {
  return {
    dynamic: false,
    _meta: { managed_by: 'sandtrail', mapping_version: MAPPING_VERSION },
    properties: {
      batch: { type: 'keyword' },
      source: keyword,
      status: keyword,
      lines: long,
      accepted: long,
      rejected: long,
      chunks: long,
      // set on the per-chunk marks only
      chunk: long,
      bytesDecoded: long,
      error: { type: 'text' },
      startedAt: epochMillis,
      finishedAt: epochMillis,
      // derived at write time for the dashboard: the minute itself, and how long after its end it was indexed
      '@timestamp': epochMillis,
      lag_seconds: long,
    },
  };
}

/** Settings of the two small bookkeeping indices. */
export function smallIndexSettings(replicas?: Replicas): Record<string, unknown> {
  return { index: { number_of_shards: 1, ...replicaSettings(replicas) } };
}
