/** One downloaded artefact of a behaviour report, as stored in the blob directory. */
export interface ArtefactRecord {
  behaviourId: string;
  /** pcap, evtx, memdump or html. */
  kind: string;
  /** Absolute path of the file in the blob directory. */
  path: string;
  size: number;
  /** SHA-256 of the file's bytes, lower-case hex. */
  sha256: string;
  /** `feed_link`: from the feed line's link (0 API units); `endpoint`: /file_behaviours/{id}/{kind} (1 unit). */
  source: 'feed_link' | 'endpoint';
  /** Epoch milliseconds of the download. */
  fetchedAt: number;
  /** The report version (last_modification_date, epoch seconds) the file belongs to; absent in records of earlier versions. */
  lastModified?: number;
}

/**
 * Where the store keeps what was downloaded for each report, beside (not inside) the report, so
 * a report written again (a replay, a newer version) and its artefacts never overwrite each
 * other, in whatever order they arrive. `get` shows them with the document.
 */
export interface ArtefactLog {
  /** Upsert by (behaviourId, kind): a download repeated (a retried job) leaves one record. */
  record(rec: ArtefactRecord): Promise<void>;
  /** The report's artefacts, by kind. */
  list(behaviourId: string): Promise<ArtefactRecord[]>;
}
