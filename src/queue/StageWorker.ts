/** A worker with the shared lifecycle: start once, stop (drain, or force) safely twice. */
export interface StageWorker {
  start(): void;
  stop(force?: boolean): Promise<void>;
}
