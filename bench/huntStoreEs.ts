/**
 * The Elasticsearch store `npm run bench:hunt -- --store es` reads: the same documents as the
 * SQLite one (huntDocs), written through the real Elasticsearch sink into a prefix of the run's
 * own, two calls in flight, then refreshed. Built at every run: the node may be the bench's own.
 */
import { openElasticsearchStore, type ElasticsearchStore } from '../src/store/index.js';
import type { SinkDoc } from '../src/wire/index.js';
import { primarySegments, type BenchElasticsearch } from './elasticsearch.js';
import { BenchFailure } from './failure.js';
import { huntChunks, round, type HuntStoreInfo } from './huntStore.js';

const CHUNK = 500;
const IN_FLIGHT = 2;

/** The built store, open for reading, with what it weighs. */
export interface EsHuntStore {
  store: ElasticsearchStore;
  info: HuntStoreInfo;
  /** Primary bytes per behaviour of the day indices and of the locator (one entry per behaviour), from their segments. */
  bytesPerBehaviour: { behaviours: number; locator: number };
  /** Day indices the behaviours went to. */
  dayIndices: number;
}

export async function buildEsHuntStore(
  es: BenchElasticsearch,
  o: { behaviours: number; seed: number | string },
  say: (msg: string) => void,
): Promise<EsHuntStore> {
  const store = openElasticsearchStore(`es:${es.url}`, { ...es.auth, indexPrefix: es.prefix, maxRetries: 2 });
  say(
    `building ${o.behaviours} behaviours through ElasticsearchSink under the prefix ${es.prefix}, chunks of ${CHUNK}, ${IN_FLIGHT} in flight...`,
  );
  let written = 0;
  let files = 0;
  let bytes = 0;
  let sinkMs = 0;
  const t0 = performance.now();
  const inFlight = new Set<Promise<void>>();
  const flush = (chunk: SinkDoc[]): void => {
    const t = performance.now();
    const p = store.sink.upsert(chunk).then((res) => {
      sinkMs += performance.now() - t;
      const bad = res.find((r) => r.status !== 'ok');
      if (bad) throw new BenchFailure(`the sink refused ${bad.id}: ${JSON.stringify(bad)}`);
      const before = written;
      written += chunk.length;
      if (Math.floor(written / 100_000) > Math.floor(before / 100_000))
        say(`  ${written} behaviours, ${((performance.now() - t0) / 1000).toFixed(0)} s`);
    });
    const tracked = p.finally(() => inFlight.delete(tracked));
    // handled here and rejected again for the race or Promise.all that waits on it
    tracked.catch(() => undefined);
    inFlight.add(tracked);
  };
  try {
    for (const chunk of huntChunks({ seed: o.seed, count: o.behaviours }, CHUNK)) {
      files += chunk.files;
      bytes += chunk.bytes;
      flush(chunk.docs);
      // a failed call rejects here; the others finish before the error goes up
      if (inFlight.size >= IN_FLIGHT) await Promise.race(inFlight);
    }
    await Promise.all(inFlight);
  } catch (err) {
    await Promise.allSettled(inFlight);
    await store.close();
    throw err;
  }
  const seconds = (performance.now() - t0) / 1000;
  const days = await primarySegments(es.admin, `${es.prefix}-behaviours-*`);
  const locator = await primarySegments(es.admin, `${es.prefix}-locator`);
  const dayIndices = Object.keys(await es.admin.indices.get({ index: `${es.prefix}-behaviours-*` })).length;
  return {
    store,
    info: {
      file: `${es.url} (prefix ${es.prefix})`,
      behaviours: written,
      files,
      reused: false,
      openSeconds: null,
      build: {
        seconds: round(seconds, 1),
        perSecond: Math.round(written / seconds),
        sinkSeconds: round(sinkMs / 1000, 1),
        sinkPerSecond: Math.round(written / (sinkMs / 1000)),
        jsonMB: round(bytes / 1e6, 1),
        dbMB: round((days.bytes + locator.bytes) / 1e6, 1),
      },
    },
    bytesPerBehaviour: { behaviours: Math.round(days.bytes / written), locator: Math.round(locator.bytes / written) },
    dayIndices,
  };
}
