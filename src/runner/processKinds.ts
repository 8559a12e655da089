/** A pipeline stage a process can run. */
export type StageKind = 'feed' | 'index';

/** A further worker a process runs beside its stages: hash lookups, artefact downloads. */
export type ProducerKind = 'lookup' | 'artefacts';

/**
 * What a process's stages tell other capabilities: `artefacts`, each feed or lookup document a
 * job accepts (its downloads are queued when the job asks for them); `watch`, the documents the
 * index stage stores as new state (matched against the watchlists, hits notified).
 */
export type HookKind = 'artefacts' | 'watch';

/** What runs in one kind of process. */
export interface ProcessPlan {
  readonly stages: readonly StageKind[];
  /**
   * Where the index stage runs: `thread`, a worker thread of this process, and the process's
   * producers hand it their chunks in memory; `process`, the process's own thread, chunks through
   * Redis; null without an index stage (producers then queue index jobs for a fleet).
   */
  readonly indexIn: 'thread' | 'process' | null;
  readonly producers: readonly ProducerKind[];
  readonly hooks: readonly HookKind[];
}

/**
 * Every kind of process sandtrail runs, in one table: superviseWorkers builds each from its row
 * (the stages, the transport between them, the producers and the hooks), so no command wires a
 * worker or a hook of its own.
 */
export const PROCESS_KINDS = {
  /** `backfill`: a range of minutes, both stages in one process. */
  backfill: { stages: ['feed', 'index'], indexIn: 'thread', producers: ['artefacts'], hooks: ['artefacts', 'watch'] },
  /** `run`: live ingestion with its scheduler, both stages in one process. */
  run: { stages: ['feed', 'index'], indexIn: 'thread', producers: ['artefacts'], hooks: ['artefacts', 'watch'] },
  /** `lookup`: hash lookups and the index stage in one process. */
  lookup: { stages: ['index'], indexIn: 'thread', producers: ['lookup', 'artefacts'], hooks: ['artefacts', 'watch'] },
  /** `backfill --no-workers`, `lookup --no-workers`: the fleet's workers do the work; this process waits for it. */
  waiter: { stages: [], indexIn: null, producers: [], hooks: [] },
  'worker feed': { stages: ['feed'], indexIn: null, producers: [], hooks: ['artefacts'] },
  'worker index': { stages: ['index'], indexIn: 'process', producers: [], hooks: ['watch'] },
  'worker lookup': { stages: [], indexIn: null, producers: ['lookup', 'artefacts'], hooks: ['artefacts'] },
  'worker artefacts': { stages: [], indexIn: null, producers: ['artefacts'], hooks: [] },
  /** `sandtrail scheduler`: the live scheduler alone, for a fleet. */
  scheduler: { stages: [], indexIn: null, producers: [], hooks: [] },
  /** Both stages on one thread, chunks through Redis (the month soak: one clock for both). */
  'single thread': { stages: ['feed', 'index'], indexIn: 'process', producers: [], hooks: ['watch'] },
} as const satisfies Record<string, ProcessPlan>;

export type ProcessKind = keyof typeof PROCESS_KINDS;
