import { createRequire } from 'node:module';
import type * as PromClient from 'prom-client';
import type { Counter, Histogram, Registry } from 'prom-client';

/** prom-client, loaded by the first registry: a process that serves no metrics never loads it (~40 ms). */
const promClient = (): typeof PromClient => createRequire(import.meta.url)('prom-client') as typeof PromClient;

/** One measurement, as instrumented code reports it (and as a worker thread forwards it). */
export type MetricEvent =
  | { m: 'received'; stage: string; n: number }
  | { m: 'indexed'; stage: string; n: number }
  | { m: 'stale'; n: number }
  | { m: 'rejected'; stage: string; code: string; n: number }
  | { m: 'batch'; outcome: string }
  | { m: 'decoded'; n: number }
  | { m: 'storeWrite'; backend: string; seconds: number }
  | { m: 'apiCall'; operation: string; units: Record<string, number> }
  | { m: 'artefact'; kind: string; outcome: string; bytes: number }
  /** A new watch hit (recorded for the first time). */
  | { m: 'watchHit'; watch: string }
  /** One notification of a watch hit: `ok`, or `failed` (dead-lettered). */
  | { m: 'watchNotification'; channel: 'file' | 'webhook'; outcome: 'ok' | 'failed' };

/** Values read from Redis and the store when scraped (a fleet's shared state, not this process's). */
export interface SharedStateReader {
  /** Jobs per queue and state. */
  queueDepths(): Promise<Record<string, Record<string, number>>>;
  deadLetters(): Promise<number>;
  /** Now minus the end of the newest fully processed minute, and the run of missing minutes ending there. */
  ingestion(): Promise<{ lagSeconds: number | null; missingInARow: number }>;
}

/**
 * Every metric a sandtrail process exposes, prefixed `sandtrail_`, units in the names. Counters
 * are this process's own (in a fleet each process reports its share; Prometheus sums them);
 * gauges of shared state are read at scrape time from Redis and the store.
 */
export class PipelineMetrics {
  readonly registry: Registry;
  private readonly received: Counter<'stage'>;
  private readonly indexed: Counter<'stage'>;
  private readonly stale: Counter;
  private readonly rejected: Counter<'stage' | 'code'>;
  private readonly batches: Counter<'outcome'>;
  private readonly decoded: Counter;
  private readonly storeWrite: Histogram<'backend'>;
  private readonly apiRequests: Counter<'operation'>;
  private readonly apiUnits: Counter<'kind' | 'operation'>;
  private readonly artefacts: Counter<'kind' | 'outcome'>;
  private readonly artefactBytes: Counter<'kind'>;
  private readonly watchHits: Counter<'watch'>;
  private readonly watchNotifications: Counter<'channel' | 'outcome'>;
  private reader: SharedStateReader | undefined;

  constructor() {
    const { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } = promClient();
    this.registry = new Registry();
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: 'sandtrail_' });
    this.received = new Counter({
      name: 'sandtrail_records_received_total',
      help: 'Records read (feed lines, API reports) by stage.',
      labelNames: ['stage'],
      registers,
    });
    this.indexed = new Counter({
      name: 'sandtrail_records_indexed_total',
      help: 'Documents written to the store by stage.',
      labelNames: ['stage'],
      registers,
    });
    this.stale = new Counter({
      name: 'sandtrail_records_stale_total',
      help: 'Documents not written because a newer version was stored.',
      registers,
    });
    this.rejected = new Counter({
      name: 'sandtrail_records_rejected_total',
      help: 'Records dead-lettered, by stage and code.',
      labelNames: ['stage', 'code'],
      registers,
    });
    this.batches = new Counter({
      name: 'sandtrail_batches_total',
      help: 'Feed batches finished, by outcome.',
      labelNames: ['outcome'],
      registers,
    });
    this.decoded = new Counter({ name: 'sandtrail_decoded_bytes_total', help: 'Bytes of feed JSON lines decoded.', registers });
    this.storeWrite = new Histogram({
      name: 'sandtrail_store_write_seconds',
      help: 'Time of one store write: a bulk request, or a SQLite transaction of the chunks written together.',
      labelNames: ['backend'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    this.apiRequests = new Counter({
      name: 'sandtrail_api_requests_total',
      help: 'Upstream GTI requests recorded on the quota ledger, by operation.',
      labelNames: ['operation'],
      registers,
    });
    this.apiUnits = new Counter({
      name: 'sandtrail_api_units_total',
      help: 'Quota units spent by quota kind and operation (feed reads cost 0, rule 3).',
      labelNames: ['kind', 'operation'],
      registers,
    });
    this.artefacts = new Counter({
      name: 'sandtrail_artefacts_total',
      help: 'Artefact downloads by kind and outcome.',
      labelNames: ['kind', 'outcome'],
      registers,
    });
    this.artefactBytes = new Counter({
      name: 'sandtrail_artefact_bytes_total',
      help: 'Bytes of artefacts stored.',
      labelNames: ['kind'],
      registers,
    });
    this.watchHits = new Counter({
      name: 'sandtrail_watch_hits_total',
      help: 'New watch hits (each watch, behaviour and version counted once), by watch.',
      labelNames: ['watch'],
      registers,
    });
    this.watchNotifications = new Counter({
      name: 'sandtrail_watch_notifications_total',
      help: 'Watch hit notifications by channel (file, webhook) and outcome (ok, failed: dead-lettered).',
      labelNames: ['channel', 'outcome'],
      registers,
    });
    // prom-client calls collect() with the gauge as `this`: the reader is reached through a closure
    const shared = (): SharedStateReader | undefined => this.reader;
    new Gauge({
      name: 'sandtrail_queue_jobs',
      help: 'Jobs per queue and state (read from Redis: the same for every process of a pipeline).',
      labelNames: ['queue', 'state'],
      registers,
      async collect() {
        this.reset();
        // unread (Redis not answering): no series rather than a scrape that fails
        const depths =
          (await shared()
            ?.queueDepths()
            .catch(() => undefined)) ?? {};
        for (const [queue, states] of Object.entries(depths))
          for (const [state, n] of Object.entries(states)) this.set({ queue, state }, n);
      },
    });
    new Gauge({
      name: 'sandtrail_dead_letters',
      help: 'Dead letters in the store.',
      registers,
      async collect() {
        const n = await shared()
          ?.deadLetters()
          .catch(() => undefined);
        if (n !== undefined) this.set(n);
        else leaveOut(this);
      },
    });
    let ingestion: Promise<{ lagSeconds: number | null; missingInARow: number }> | undefined;
    const readIngestion = (): Promise<{ lagSeconds: number | null; missingInARow: number }> =>
      (ingestion ??= (shared()?.ingestion() ?? Promise.resolve({ lagSeconds: null, missingInARow: 0 })).finally(() =>
        setImmediate(() => (ingestion = undefined)),
      ));
    new Gauge({
      name: 'sandtrail_ingestion_lag_seconds',
      help: 'Now minus the end of the newest fully processed feed minute.',
      registers,
      async collect() {
        const lag = await readIngestion().catch(() => null);
        if (lag && lag.lagSeconds !== null) this.set(lag.lagSeconds);
        else leaveOut(this);
      },
    });
    new Gauge({
      name: 'sandtrail_missing_minutes_consecutive',
      help: 'Feed minutes missing in a row, ending at the newest processed minute.',
      registers,
      async collect() {
        const read = await readIngestion().catch(() => null);
        if (read) this.set(read.missingInARow);
        else leaveOut(this);
      },
    });
  }

  /** Where the gauges of shared state are read from (set by the process serving /metrics). */
  readShared(reader: SharedStateReader | undefined): void {
    this.reader = reader;
  }

  /** Applies one measurement to this registry. */
  apply(e: MetricEvent): void {
    switch (e.m) {
      case 'received':
        return this.received.inc({ stage: e.stage }, e.n);
      case 'indexed':
        return this.indexed.inc({ stage: e.stage }, e.n);
      case 'stale':
        return this.stale.inc(e.n);
      case 'rejected':
        return this.rejected.inc({ stage: e.stage, code: e.code }, e.n);
      case 'batch':
        return this.batches.inc({ outcome: e.outcome });
      case 'decoded':
        return this.decoded.inc(e.n);
      case 'storeWrite':
        return this.storeWrite.observe({ backend: e.backend }, e.seconds);
      case 'apiCall':
        this.apiRequests.inc({ operation: e.operation });
        for (const [kind, n] of Object.entries(e.units)) if (n > 0) this.apiUnits.inc({ kind, operation: e.operation }, n);
        return;
      case 'artefact':
        this.artefacts.inc({ kind: e.kind, outcome: e.outcome });
        if (e.bytes > 0) this.artefactBytes.inc({ kind: e.kind }, e.bytes);
        return;
      case 'watchHit':
        return this.watchHits.inc({ watch: e.watch });
      case 'watchNotification':
        return this.watchNotifications.inc({ channel: e.channel, outcome: e.outcome });
    }
  }

  /** The Prometheus text exposition of every metric. */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}

/**
 * No sample at all for an unlabelled gauge whose value could not be read (the store down): not its
 * last value, frozen, nor prom-client's 0, either of which would keep an alert on it quiet.
 * prom-client has no call for this; its samples are the values of the gauge's `hashMap`.
 */
function leaveOut(gauge: object): void {
  (gauge as { hashMap: Record<string, unknown> }).hashMap = {};
}
