import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { readdirSync, readlinkSync, realpathSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

/** Whether process `pid` has `file` open (Linux: a link under /proc/<pid>/fd points to it). */
export function holdsOpen(pid: number, file: string): boolean {
  const target = realpathSync(file);
  try {
    return readdirSync(`/proc/${pid}/fd`).some((fd) => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`) === target;
      } catch {
        return false; // closed meanwhile
      }
    });
  } catch {
    return false; // the process is gone
  }
}

/**
 * Shows that `child` waits on the store `file` another connection holds locked: it opens the file
 * (waited for, up to `openWithinMs`), and `heldMs` later it has neither exited nor let go of it.
 * A command that did not wait would have answered or failed by then; the caller releases the
 * lock afterwards and checks that the command then succeeds.
 */
export async function assertBlockedOn(child: ChildProcess, file: string, heldMs: number, openWithinMs = 60_000): Promise<void> {
  const pid = child.pid as number;
  const deadline = Date.now() + openWithinMs;
  while (!holdsOpen(pid, file)) {
    assert.ok(child.exitCode === null, `the command exited (${child.exitCode}) before it opened ${file}`);
    assert.ok(Date.now() < deadline, `the command did not open ${file} within ${openWithinMs} ms`);
    await sleep(20);
  }
  await sleep(heldMs);
  assert.equal(child.exitCode, null, `the command ended (${child.exitCode}) instead of waiting on the locked store`);
  assert.ok(holdsOpen(pid, file), `the command let go of ${file} while it was locked`);
}
