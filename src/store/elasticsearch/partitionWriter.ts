import type { Client } from '@elastic/elasticsearch';
import { SandtrailError } from '../../errors/index.js';
import { invalidDocReason, type ItemResult } from '../Sink.js';
import { type DocMeta } from '../../wire/index.js';
import type { CopyDelete } from './bulkSender.js';
import { classifyRequestError, errorType } from './classify.js';
import { copiesListed, type Locator } from './locator.js';
import type { EsNames } from './names.js';
import { dayIndexName, locateCopies, MAX_PARTITION_SEC, newestCopy, type Copy, type PartitionList } from './partitions.js';

/** What one write does with one behaviour, decided from every copy found in every partition. */
export type DocPlan =
  /** Index it into its day index, and delete its (older) copies elsewhere. */
  | { kind: 'write'; target: string; deletes: CopyDelete[] }
  /** A newer copy exists: write nothing, only delete duplicates left by a race (every copy but the newest). */
  | { kind: 'stale'; deletes: CopyDelete[] }
  /** A later version of the same behaviour in the same call replaces it: ok, as if written and replaced at once. */
  | { kind: 'replaced' };

/** The partitions are not usable as they are: the alias is missing, or a new day index did not join it. */
export class PartitionsNotReady extends Error {
  constructor(
    readonly why: 'alias' | 'template',
    message: string,
  ) {
    super(message);
  }
}

/**
 * The one-live-document rule for a behaviour of version `lmd`: a write goes to its day index
 * unless some copy is newer, and every other copy is deleted with the surviving version
 * (`external_gte`, so a copy that became newer meanwhile is kept).
 */
export function planDoc(n: EsNames, lmd: number, copies: readonly Copy[]): DocPlan {
  const target = dayIndexName(n, lmd);
  const newest = newestCopy(copies, target);
  if (!newest || lmd >= newest.version) {
    return { kind: 'write', target, deletes: copies.filter((c) => c.index !== target).map((c) => ({ index: c.index, version: lmd })) };
  }
  const keep = newestCopy(copies, dayIndexName(n, newest.version)) as Copy;
  return { kind: 'stale', deletes: copies.filter((c) => c !== keep).map((c) => ({ index: c.index, version: keep.version })) };
}

/**
 * The plans of one call's documents, as if they were written one after the other: a version
 * older than a stored copy or than an earlier one of the call is stale; of the others only the
 * last (the newest) is written, the ones it replaces are ok without a write of their own.
 */
export function planAll(n: EsNames, docs: readonly { id: string; lmd: number }[], copies: ReadonlyMap<string, Copy[]>): DocPlan[] {
  const plans = new Array<DocPlan>(docs.length);
  const byId = new Map<string, number[]>();
  docs.forEach((d, k) => byId.set(d.id, [...(byId.get(d.id) ?? []), k]));
  for (const [id, positions] of byId) {
    const found = copies.get(id) ?? [];
    let newest = newestCopy(found)?.version ?? -1;
    let winner: number | undefined;
    for (const k of positions) {
      const lmd = (docs[k] as { lmd: number }).lmd;
      if (lmd < newest) {
        plans[k] = { kind: 'stale', deletes: [] };
        continue;
      }
      if (winner !== undefined) plans[winner] = { kind: 'replaced' };
      newest = lmd;
      winner = k;
    }
    // the one written carries the deletes; without one, the last stale one removes duplicates
    const last = winner ?? (positions[positions.length - 1] as number);
    plans[last] = planDoc(n, (docs[last] as { lmd: number }).lmd, found);
  }
  return plans;
}

/**
 * Plans the writes of one call: records each document's day index in the locator first (so a
 * later write finds this copy), looks every id up in the partitions its locator entry lists (one
 * real-time mget of the locator, one of those partitions: the same cost whatever the days kept),
 * decides per document, and creates the day indices the writes need explicitly, before the bulk
 * (which could only auto-create one deleted in between, from the same template). A created index
 * must come back behind the alias, which proves the current template made it (lifecycle policy,
 * mappings). Until es setup has filled the locator of a store that predates it, every id is looked
 * up in every partition behind the alias (and in those that appeared meanwhile, other writers' days).
 */
export async function planWrites(
  client: Client,
  n: EsNames,
  partitions: PartitionList,
  locator: Locator,
  docs: readonly { id: string; lmd: number }[],
): Promise<DocPlan[]> {
  const indices = await partitions.get();
  if (indices === null) throw new PartitionsNotReady('alias', `Elasticsearch read alias ${n.alias} does not exist`);
  const ids = [...new Set(docs.map((d) => d.id))];
  const state = await locator.state();
  const listed = state === 'missing' ? undefined : await locator.record(docs.map((d) => ({ ...d, index: dayIndexName(n, d.lmd) })));
  const copies = state === 'complete' && listed ? await copiesListed(client, listed) : await locateCopies(client, ids, indices);
  const decide = (): DocPlan[] => planAll(n, docs, copies);
  let plans = decide();
  const missing = [...new Set(plans.flatMap((p) => (p.kind === 'write' && !indices.includes(p.target) ? [p.target] : [])))];
  if (missing.length === 0) return plans;
  for (const index of missing) await createPartition(client, n, index);
  const after = (await partitions.get(true)) ?? [];
  const stray = missing.find((index) => !after.includes(index));
  if (stray) {
    throw new PartitionsNotReady(
      'template',
      `index template ${n.indexTemplate} is missing or predates daily partitions: day index ${stray} was created without the read alias ${n.alias}`,
    );
  }
  if (state === 'complete') return plans;
  const extra = after.filter((index) => !indices.includes(index));
  for (const [id, found] of await locateCopies(client, ids, extra)) copies.set(id, [...(copies.get(id) ?? []), ...found]);
  plans = decide();
  return plans;
}

/** Creates a day index from the template; one another writer created first is as good. */
async function createPartition(client: Client, n: EsNames, index: string): Promise<void> {
  try {
    await client.indices.create({ index });
  } catch (err) {
    if (errorType(err) === 'resource_already_exists_exception') return;
    const f = classifyRequestError(err);
    if (f.kind === 'auth') {
      throw new SandtrailError(
        'SINK_AUTH',
        `Elasticsearch refused to create the day index ${index}: ${f.reason}; writers need the create_index privilege on ${n.pattern}`,
        { index },
        { cause: err },
      );
    }
    throw err;
  }
}

/** How writes bring the setup back: `ready` runs it (memoized), `onMissingAlias` makes it run again. */
export interface SetupHooks {
  ready?: (() => Promise<void>) | undefined;
  onMissingAlias?: (() => void) | undefined;
}

/**
 * `planWrites`, with the setup brought back once when the alias is missing (or a new day index
 * came out of an outdated template) under automatic setup; without it that is the store's fault
 * (STORE_READONLY naming `sandtrail es setup`), never a document's.
 */
export async function planWithSetup(
  client: Client,
  n: EsNames,
  partitions: PartitionList,
  locator: Locator,
  docs: readonly { id: string; lmd: number }[],
  setup: SetupHooks,
): Promise<DocPlan[]> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await planWrites(client, n, partitions, locator, docs);
    } catch (err) {
      if (!(err instanceof PartitionsNotReady)) throw err;
      partitions.forget();
      locator.forget();
      if (!setup.ready) {
        const what = err.why === 'alias' ? `index missing: ${err.message}` : err.message;
        throw new SandtrailError('STORE_READONLY', `${what} and elasticsearch.setup is manual; run sandtrail es setup`, { index: n.alias });
      }
      if (attempt > 0) throw err;
      setup.onMissingAlias?.();
      await setup.ready();
    }
  }
}

/** Elasticsearch accepts external versions in [0, 2^63); JavaScript integers are exact up to 2^53. */
const MAX_VERSION = Number.MAX_SAFE_INTEGER;
const MAX_ID_BYTES = 512;

/** Problems Elasticsearch would reject for the whole bulk request (or no day index could hold), caught per document instead. */
export function localRejection(doc: DocMeta): { code: string; reason: string } | undefined {
  const invalid = invalidDocReason(doc);
  if (invalid) return { code: 'invalid_document', reason: invalid };
  if (doc.last_modification_date < 0 || doc.last_modification_date > MAX_VERSION) {
    return { code: 'invalid_version', reason: `last_modification_date ${doc.last_modification_date} is not a valid external version` };
  }
  if (Buffer.byteLength(doc.id) > MAX_ID_BYTES) return { code: 'invalid_id', reason: `id is longer than ${MAX_ID_BYTES} bytes` };
  if (doc.last_modification_date > MAX_PARTITION_SEC) {
    return {
      code: 'invalid_date',
      reason: `last_modification_date ${doc.last_modification_date} is after the year 9999: no day index can be named for it`,
    };
  }
  return undefined;
}

/**
 * The outcome of a version a newer one of the same call replaced: ok (or stale) with it; when the
 * newer one failed, retryable, so the index stage writes this one again on its own, as a store
 * writing the versions in turn would have kept it.
 */
export function replacedResult(id: string, newer: ItemResult | undefined): ItemResult {
  if (newer?.status === 'ok') return newer.stale ? { id, status: 'ok', stale: true } : { id, status: 'ok' };
  const why = newer ? `${newer.code}: ${newer.reason}` : 'not sent';
  return { id, status: 'retryable', code: 'newer_version_failed', reason: `the newer version of ${id} in the same write failed (${why})` };
}
