import type { Config } from '../config/index.js';
import type { BehaviourDoc } from '../normalize/index.js';
import { Queue, QUEUE_STREAMS, type ArtefactChoice, type Queues } from '../queue/index.js';
import { parseArtefactFilter, type FilterableDoc } from './artefactFilter.js';
import { CONTEXT_KEY, HAS_FLAG, isArtefactKind, type ArtefactKind } from './kinds.js';
import { ARTEFACT_QUEUE, artefactJobId, type ArtefactJobData, type ArtefactJobResult } from './names.js';

/** The artefact queue on the pipeline's connection; finished jobs stay a week so a re-read report adds nothing. */
export function createArtefactQueue(queues: Queues, config: Config): Queue<ArtefactJobData, ArtefactJobResult> {
  const q = new Queue<ArtefactJobData, ArtefactJobResult>(ARTEFACT_QUEUE, {
    connection: queues.connection,
    prefix: config.queuePrefix,
    streams: QUEUE_STREAMS,
    defaultJobOptions: {
      attempts: config.artefacts.attempts,
      backoff: { type: 'exponential', delay: config.artefacts.backoffMs },
      removeOnComplete: { age: 7 * 24 * 3600, count: 100_000 },
      removeOnFail: { age: 7 * 24 * 3600 },
    },
  });
  q.on('error', () => undefined); // the queues' connection reports outages once
  return q;
}

/**
 * Turns the reports a feed or lookup job reads into artefact download jobs: one per artefact
 * kind asked for that the report has (`has_pcap`...) and that passes the filter. Feed reports
 * download through their line's link; lookups through the artefact endpoint.
 */
export class ArtefactEnqueuer {
  private readonly filters = new Map<string, (d: FilterableDoc) => boolean>();

  constructor(private readonly queue: Queue<ArtefactJobData, ArtefactJobResult>) {}

  /** Jobs queued for one report (0 when it has none of the kinds, or fails the filter). */
  async forDoc(
    doc: BehaviourDoc,
    choice: ArtefactChoice,
    source: 'feed_link' | 'endpoint',
    budget?: { run: string; maxApiUnits?: number },
  ): Promise<number> {
    // validated when the command parsed them; a job from elsewhere keeps only the kinds there are
    const kinds = choice.kinds.filter(isArtefactKind);
    if (kinds.length === 0) return 0;
    const attrs = doc.attributes as unknown as Record<string, unknown>;
    if (!this.filterOf(choice.filter)({ sandbox_name: doc.sandbox_name, attributes: attrs })) return 0;
    let n = 0;
    for (const kind of kinds) {
      if (attrs[HAS_FLAG[kind]] !== true) continue;
      const data: ArtefactJobData = {
        behaviourId: doc.id,
        sha256: doc.sha256,
        sandbox: doc.sandbox_name,
        kind,
        source,
        lastModified: doc.last_modification_date,
      };
      if (source === 'feed_link') {
        const link = linkOf(doc, kind);
        if (!link) continue; // the report says it has one but its line carries no link
        data.link = link;
      }
      if (choice.maxBytes !== undefined) data.maxBytes = choice.maxBytes;
      const run = budget?.run ?? choice.run;
      if (run) data.run = run;
      if (budget?.maxApiUnits !== undefined) data.maxApiUnits = budget.maxApiUnits;
      const jobId = artefactJobId(doc.id, doc.last_modification_date, kind, source);
      await this.releaseFinished(jobId);
      await this.queue.add(kind, data, { jobId });
      n += 1;
    }
    return n;
  }

  /**
   * The job id is one per (report version, kind), so a download queued twice at once runs once;
   * a finished job of that id (kept a week) is removed first, so a later run asks again: a failed
   * download is tried anew, and a done one is checked (nothing is requested when the file is there).
   */
  private async releaseFinished(jobId: string): Promise<void> {
    const job = await this.queue.getJob(jobId);
    if (!job) return;
    const state = await job.getState();
    if (state === 'completed' || state === 'failed') await job.remove().catch(() => undefined);
  }

  private filterOf(spec: string | undefined): (d: FilterableDoc) => boolean {
    const key = spec ?? '';
    let f = this.filters.get(key);
    if (!f) {
      f = parseArtefactFilter(spec);
      this.filters.set(key, f);
    }
    return f;
  }
}

function linkOf(doc: BehaviourDoc, kind: ArtefactKind): string | undefined {
  const ctx = (doc as { context_attributes?: Record<string, unknown> }).context_attributes;
  const v = ctx?.[CONTEXT_KEY[kind]];
  return typeof v === 'string' && /^https?:\/\//.test(v) ? v : undefined;
}
