/** Small helpers shared by the phases that run processes against Redis. */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Cluster, Redis } from 'ioredis';

/**
 * With REDIS_URL's Redis, deletes every key under this run's prefix once the workers are stopped,
 * so a benchmark leaves nothing behind in a shared Redis. Bounded: an unreachable Redis only gets a note.
 */
export async function dropPrefix(conn: Redis | Cluster, prefix: string, say: (msg: string) => void): Promise<void> {
  const drop = async (): Promise<void> => {
    // SCAN walks one server: a cluster's keys are on its masters
    for (const node of 'nodes' in conn ? conn.nodes('master') : [conn]) {
      let cursor = '0';
      do {
        const [next, keys] = await node.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
        cursor = next;
        if (keys.length > 0) await node.unlink(...keys);
      } while (cursor !== '0');
    }
  };
  const timeout = sleep(10_000, 'timeout', { ref: false });
  const outcome = await Promise.race([
    drop().then(
      () => 'ok',
      (err: Error) => err.message,
    ),
    timeout,
  ]);
  if (outcome !== 'ok') say(`note: could not delete the keys ${prefix}:* from REDIS_URL's Redis (${outcome})`);
}

/** Resolves (to undefined) once `signal` is aborted. */
export function aborted(signal: AbortSignal): Promise<undefined> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve(undefined);
    else signal.addEventListener('abort', () => resolve(undefined), { once: true });
  });
}

/** The machine a run's figures come from: cores, Node, and the 1-minute load at its start and end. */
export function machineOf(loadAtStart: number): { cpus: number; node: string; loadAtStart: number; loadAtEnd: number } {
  const r2 = (x: number): number => Math.round(x * 100) / 100;
  return { cpus: availableParallelism(), node: process.versions.node, loadAtStart: r2(loadAtStart), loadAtEnd: r2(loadavg()[0] ?? 0) };
}

/** Bytes this process has caused to be written to storage so far (`write_bytes` of /proc/self/io). */
export function processWriteBytes(): number {
  return Number(/write_bytes: (\d+)/.exec(readFileSync('/proc/self/io', 'utf8'))?.[1] ?? 0);
}

/** A SQLite file's size with its WAL's. */
export function sqliteFileBytes(file: string): number {
  return [file, `${file}-wal`].reduce((s, f) => s + (existsSync(f) ? statSync(f).size : 0), 0);
}
