import type { Client } from '@elastic/elasticsearch';

/**
 * Makes the writes of a small bookkeeping index visible to the search that follows. Dead letters
 * and batch-log entries are written without a refresh (a refresh per feed minute and chunk cost
 * the node a tenth of its ingest CPU), so their searches refresh first: reads are rare, writes
 * are not. A failure here (a reader without the privilege, a missing index) is left to the search
 * itself, which reports it in its own words.
 */
export async function refreshForRead(client: Client, index: string): Promise<void> {
  await client.indices.refresh({ index, ignore_unavailable: true, allow_no_indices: true }).catch(() => undefined);
}
