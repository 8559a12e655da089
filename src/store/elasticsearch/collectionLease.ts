import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@elastic/elasticsearch';
import { SandtrailError } from '../../errors/index.js';
import type { StoredCollection } from '../CollectionStore.js';
import { errorType, isNotFound, readFailure, storeFailure } from './classify.js';

/** A shared collection's document in `<prefix>-collections`. */
/** A shared collection's document in `<prefix>-collections`: the stored collection and its lease. */
export interface CollectionSource extends StoredCollection {
  /** Epoch ms until which one append holds the collection. */
  lease_until: number;
}

/** A collection document with the sequence number and primary term its next conditional write names. */
export interface HeldCollection {
  source: CollectionSource;
  seqNo: number;
  primaryTerm: number;
}

/** How long an append may hold a collection before another process may take it over. */
const LEASE_MS = 5 * 60_000;
/** How long an append waits for another process's append to the same collection. */
const WAIT_MS = 60_000;

export const isConflict = (err: unknown): boolean => errorType(err) === 'version_conflict_engine_exception';

/** The collection document (a real-time get), or null. */
export async function getCollection(client: Client, index: string, id: string): Promise<HeldCollection | null> {
  try {
    const r = await client.get<CollectionSource>({ index, id });
    return r.found && r._source ? { source: r._source, seqNo: r._seq_no ?? 0, primaryTerm: r._primary_term ?? 0 } : null;
  } catch (err) {
    if (isNotFound(err)) return null;
    throw readFailure('collection store get', err);
  }
}

/**
 * Takes a collection for one append: waits out another process's lease (at most WAIT_MS), then
 * writes its own under `if_seq_no`, so two processes cannot both take it.
 */
export async function claimCollection(client: Client, index: string, id: string): Promise<HeldCollection> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const got = await getCollection(client, index, id);
    if (!got) throw new SandtrailError('NOT_FOUND', `no shared collection ${id}`);
    if (got.source.lease_until <= Date.now()) {
      const leaseUntil = Date.now() + LEASE_MS;
      try {
        const r = await client.update<CollectionSource, Partial<CollectionSource>>({
          index,
          id,
          doc: { lease_until: leaseUntil },
          if_seq_no: got.seqNo,
          if_primary_term: got.primaryTerm,
        });
        return { source: { ...got.source, lease_until: leaseUntil }, seqNo: r._seq_no ?? 0, primaryTerm: r._primary_term ?? 0 };
      } catch (err) {
        if (!isConflict(err)) throw storeFailure('collection store append', err);
      }
    }
    if (Date.now() > deadline)
      throw new SandtrailError('SINK_UNAVAILABLE', `collection ${id} is being written by another process: try again later`);
    await sleep(200);
  }
}

/** Lets the next append in at once (after a failed one) rather than after the lease. */
export async function releaseCollection(client: Client, index: string, id: string, held: HeldCollection): Promise<void> {
  await client.update({ index, id, doc: { lease_until: 0 }, if_seq_no: held.seqNo, if_primary_term: held.primaryTerm });
}
