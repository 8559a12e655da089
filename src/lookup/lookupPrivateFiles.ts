import type { Cluster, Redis } from 'ioredis';
import type { Config } from '../config/index.js';
import { errorCode, messageOf, SandtrailError } from '../errors/index.js';
import { rejectedTextLetter } from '../feed/index.js';
import { callWithRetry } from '../gti/index.js';
import { normalizePrivateFile } from '../normalize/index.js';
import type { Store } from '../store/index.js';
import { meteredClient } from './meteredClient.js';
import { RunBudget } from './RunBudget.js';

/** How one SHA-256 ended: stored, not found (404), refused before any request, or failed. */
export interface PrivateLookupReport {
  given: string;
  sha256?: string;
  outcome: 'stored' | 'stale' | 'not_found' | 'invalid' | 'rejected' | 'failed' | 'budget';
  /** The report carried gti_assessment (it does when the x-tool header is sent). */
  gtiAssessment?: boolean;
  warnings?: number;
  error?: string;
}

export interface PrivateLookupSummary {
  files: PrivateLookupReport[];
  counts: Partial<Record<PrivateLookupReport['outcome'], number>>;
  api_units: number;
}

const SHA256 = /^[0-9a-fA-F]{64}$/;

/** Refuses anything but a SHA-256 before any request (the endpoint takes no MD5 or SHA-1). */
export function privateLookupRefusal(given: string): string | undefined {
  const s = given.trim();
  if (SHA256.test(s)) return undefined;
  const kind = /^[0-9a-fA-F]{32}$/.test(s) ? ' (this is an MD5)' : /^[0-9a-fA-F]{40}$/.test(s) ? ' (this is a SHA-1)' : '';
  return `GET /private/files/{id} takes a SHA-256 only (64 hex characters)${kind}: not requested, nothing spent`;
}

/**
 * `GET /private/files/{sha256}` for each file, with the x-tool header so reports carry
 * `gti_assessment`, normalized as private_file documents into the store's own place for them.
 * A 403 stops everything with one message (the account lacks Private Scanning); 401 too; a 404
 * is that file's outcome. Refused input costs nothing and is never on the ledger.
 */
export async function lookupPrivateFiles(o: {
  config: Config;
  redis: Redis | Cluster;
  store: Store;
  hashes: readonly string[];
  run: string;
  maxApiUnits?: number;
  signal?: AbortSignal;
}): Promise<PrivateLookupSummary> {
  const { config, store } = o;
  const budget = new RunBudget(o.redis, RunBudget.keyOf(config.queuePrefix, o.run), o.maxApiUnits ?? Number.POSITIVE_INFINITY);
  const files: PrivateLookupReport[] = [];
  const valid: { given: string; sha256: string }[] = [];
  const seen = new Set<string>();
  for (const given of o.hashes) {
    const refused = privateLookupRefusal(given);
    if (refused) files.push({ given, outcome: 'invalid', error: refused });
    else {
      const sha256 = given.trim().toLowerCase();
      if (!seen.has(sha256)) valid.push({ given, sha256 });
      seen.add(sha256);
    }
  }
  // the client is made only when something will be asked (refused input needs no key)
  const metered = valid.length ? meteredClient({ config, redis: o.redis, budget, signal: o.signal }) : undefined;
  let spent: string | undefined;
  for (const { given, sha256 } of valid) {
    if (!metered) break;
    // the budget stops the run: what was read stays stored, the rest is reported, not asked
    if (spent !== undefined) {
      files.push({ given, sha256, outcome: 'budget', error: spent });
      continue;
    }
    let answer: unknown;
    try {
      answer = await callWithRetry(() => metered.client.getJson(`/private/files/${sha256}`, o.signal), {
        retries: config.gti.maxRetries,
        backoffMs: config.gti.backoffMs,
        signal: o.signal,
      });
    } catch (err) {
      const code = errorCode(err);
      if (code === 'GTI_NOT_FOUND') {
        files.push({ given, sha256, outcome: 'not_found' });
        continue;
      }
      if (code === 'GTI_FORBIDDEN') {
        throw new SandtrailError(
          'GTI_FORBIDDEN',
          'the GTI account lacks the Private Scanning licence (GET /private/files answered 403): private file reports cannot be read with this key',
        );
      }
      if (code === 'BUDGET_EXCEEDED') {
        spent = `${code}: ${messageOf(err)}`;
        files.push({ given, sha256, outcome: 'budget', error: spent });
        continue;
      }
      if (code === 'GTI_AUTH') throw err;
      files.push({ given, sha256, outcome: 'failed', error: `${code ?? 'ERROR'}: ${messageOf(err)}` });
      continue;
    }
    const n = normalizePrivateFile(answer, { fetchedAt: Math.floor(Date.now() / 1000), maxDepth: config.feed.maxDepth });
    if (!n.ok) {
      const text = JSON.stringify(answer) ?? 'null';
      await store.dlq.put([rejectedTextLetter(`private-${sha256}`, 1, text, n.rejection, config.feed.dlqPrefixBytes)]);
      files.push({ given, sha256, outcome: 'rejected', error: `${n.rejection.code}: ${n.rejection.message}` });
      continue;
    }
    const [r] = await store.privateFiles.upsert([n.doc]);
    const report: PrivateLookupReport = {
      given,
      sha256,
      outcome: r?.status === 'ok' ? (r.stale ? 'stale' : 'stored') : 'failed',
      gtiAssessment: n.doc.gti_assessment !== null && n.doc.gti_assessment !== undefined,
      warnings: n.warnings.length,
    };
    if (r && r.status !== 'ok') report.error = `${r.code}: ${r.reason}`;
    files.push(report);
  }
  const counts: PrivateLookupSummary['counts'] = {};
  for (const f of files) counts[f.outcome] = (counts[f.outcome] ?? 0) + 1;
  return { files, counts, api_units: await budget.spent() };
}
