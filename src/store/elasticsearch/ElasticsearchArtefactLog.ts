import type { Client } from '@elastic/elasticsearch';
import { SandtrailError } from '../../errors/index.js';
import type { ArtefactLog, ArtefactRecord } from '../ArtefactLog.js';
import { isIndexNotFound, storeFailure } from './classify.js';
import type { EsBookkeepingOptions } from './ElasticsearchDeadLetterStore.js';
import { esNames } from './names.js';

/** The stored form: the index's field names (snake_case, as the mapping and Kibana show them). */
interface ArtefactSource {
  behaviour_id: string;
  kind: string;
  path: string;
  size: number;
  sha256: string;
  source: ArtefactRecord['source'];
  fetched_at: number;
  last_modified?: number;
}

/**
 * More than any report has (one record per kind, a handful of kinds), so one page is the whole
 * list without search_after.
 */
const LIST_SIZE = 100;

const docId = (behaviourId: string, kind: string): string => `${behaviourId}|${kind}`;

function toSource(rec: ArtefactRecord): ArtefactSource {
  return {
    behaviour_id: rec.behaviourId,
    kind: rec.kind,
    path: rec.path,
    size: rec.size,
    sha256: rec.sha256,
    source: rec.source,
    fetched_at: rec.fetchedAt,
    ...(rec.lastModified !== undefined ? { last_modified: rec.lastModified } : {}),
  };
}

function fromSource(s: ArtefactSource): ArtefactRecord {
  return {
    behaviourId: s.behaviour_id,
    kind: s.kind,
    path: s.path,
    size: s.size,
    sha256: s.sha256,
    source: s.source,
    fetchedAt: s.fetched_at,
    ...(typeof s.last_modified === 'number' ? { lastModified: s.last_modified } : {}),
  };
}

/**
 * Artefact records in `<prefix>-artefacts`, apart from the behaviour alias so a report written
 * again never drops its artefacts: one document per (behaviour, kind), `_id` =
 * `<behaviourId>|<kind>`, so a repeated download overwrites its record instead of adding one.
 */
export class ElasticsearchArtefactLog implements ArtefactLog {
  readonly index: string;

  constructor(
    private readonly client: Client,
    private readonly o: EsBookkeepingOptions = {},
  ) {
    this.index = esNames(o.prefix).artefacts;
  }

  async record(rec: ArtefactRecord): Promise<void> {
    try {
      await this.o.ready?.();
      await this.client.index({
        index: this.index,
        id: docId(rec.behaviourId, rec.kind),
        document: toSource(rec),
        // `list` is a search, which sees only refreshed documents: refresh at once so a lookup right after sees the artefact
        refresh: this.o.refresh ?? true,
      });
    } catch (err) {
      throw storeFailure('artefact log record', err);
    }
  }

  async list(behaviourId: string): Promise<ArtefactRecord[]> {
    try {
      const r = await this.client.search<ArtefactSource>({
        index: this.index,
        query: { term: { behaviour_id: behaviourId } },
        sort: [{ kind: 'asc' }],
        size: LIST_SIZE,
      });
      return r.hits.hits.flatMap((h) => (h._source ? [fromSource(h._source)] : []));
    } catch (err) {
      // nothing recorded yet on this cluster (setup runs on the first write)
      if (isIndexNotFound(err)) return [];
      const e = storeFailure('artefact log list', err);
      // a failed read is never a write failure: retry later or fix the credentials
      throw e.code === 'SINK_WRITE_FAILED' ? new SandtrailError('SINK_UNAVAILABLE', e.message, e.details, { cause: err }) : e;
    }
  }
}
