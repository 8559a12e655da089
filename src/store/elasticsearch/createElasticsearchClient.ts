import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type * as ElasticsearchModule from '@elastic/elasticsearch';
import type { Client, ClientOptions } from '@elastic/elasticsearch';
import { SandtrailError } from '../../errors/index.js';
import { shownStoreSpec } from '../shownStoreSpec.js';

const require = createRequire(import.meta.url);

/** How to reach and authenticate to the cluster (config `elasticsearch.*`, secrets from the environment). */
export interface ElasticsearchConnectionOptions {
  /** Base64 `id:key` API key (preferred over username/password). */
  apiKey?: string;
  username?: string;
  password?: string;
  /** PEM file of the CA that signed the cluster's certificate (self-managed clusters). */
  caFile?: string;
  /** SHA-256 fingerprint of the CA certificate, instead of `caFile`. */
  caFingerprint?: string;
  /** `insecure` skips certificate verification (lab clusters only). */
  tlsVerify?: 'verify' | 'insecure';
  requestTimeoutMs?: number;
  /** Client-level retries of 502/503/504 and connection errors before the sink sees them. */
  maxRetries?: number;
  /** gzip request bodies (worth it over a WAN; costs CPU). */
  compression?: boolean;
  /** Test seam: the connection class (e.g. `@elastic/elasticsearch-mock`). */
  Connection?: ClientOptions['Connection'];
}

export interface ParsedElasticsearchSpec {
  /** Node URL without credentials. */
  url: string;
  username?: string;
  password?: string;
  /** The spec with any password replaced by `***`, safe to log. */
  display: string;
}

/**
 * Parses `elasticsearch:https://host:9200`, `es:https://...` or a bare `http(s)://` URL.
 * Credentials in the URL (`https://user:pass@host`) are accepted, lifted out of the node URL and
 * redacted from the display form.
 */
export function parseElasticsearchSpec(spec: string): ParsedElasticsearchSpec {
  const raw = spec.replace(/^(elasticsearch|es):/, '');
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    // the spec may hold credentials the URL parser could not take apart: they are not echoed
    throw new SandtrailError(
      'USAGE',
      `bad Elasticsearch store "${shownStoreSpec(spec)}": expected es:https://host:9200 (or elasticsearch:https://host:9200)`,
    );
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') {
    throw new SandtrailError('USAGE', `bad Elasticsearch store "${shownStoreSpec(spec)}": the URL must be http:// or https://`);
  }
  let username: string | undefined;
  let password: string | undefined;
  try {
    username = u.username ? decodeURIComponent(u.username) : undefined;
    password = u.password ? decodeURIComponent(u.password) : undefined;
  } catch {
    throw new SandtrailError(
      'USAGE',
      `bad Elasticsearch store "${shownStoreSpec(spec)}": its user or password holds a % that starts no escape (write % as %25)`,
    );
  }
  u.username = '';
  u.password = '';
  const url = u.toString().replace(/\/$/, '');
  const display = `elasticsearch:${username ? url.replace('://', `://${encodeURIComponent(username)}:***@`) : url}`;
  return { url, username, password, display };
}

/**
 * The official client, loaded when a cluster is first used: it brings ~450 files (its transport,
 * undici, OpenTelemetry, Apache Arrow), a quarter of a second of every start-up of a command or
 * worker that writes to SQLite and never needs them.
 */
function elasticsearchModule(): typeof ElasticsearchModule {
  return require('@elastic/elasticsearch') as typeof ElasticsearchModule;
}

/** Builds the official client for a node URL with the configured auth and TLS. */
export function createElasticsearchClient(url: string, o: ElasticsearchConnectionOptions = {}): Client {
  let ca: string | undefined;
  if (o.caFile) {
    try {
      ca = readFileSync(o.caFile, 'utf8');
    } catch (err) {
      throw new SandtrailError('CONFIG_INVALID', `cannot read elasticsearch.caFile ${o.caFile}: ${(err as Error).message}`);
    }
  }
  const auth: ClientOptions['auth'] = o.apiKey
    ? { apiKey: o.apiKey }
    : o.username
      ? { username: o.username, password: o.password ?? '' }
      : undefined;
  const tls = { ...(ca ? { ca } : {}), ...(o.tlsVerify === 'insecure' ? { rejectUnauthorized: false } : {}) };
  const { Client: ElasticsearchClient } = elasticsearchModule();
  return new ElasticsearchClient({
    node: url,
    ...(auth ? { auth } : {}),
    ...(Object.keys(tls).length ? { tls } : {}),
    ...(o.caFingerprint ? { caFingerprint: o.caFingerprint } : {}),
    requestTimeout: o.requestTimeoutMs ?? 60_000,
    maxRetries: o.maxRetries ?? 2,
    compression: o.compression ?? false,
    ...(o.Connection ? { Connection: o.Connection } : {}),
    name: 'sandtrail',
  });
}
