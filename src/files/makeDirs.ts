import { mkdir, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';

/**
 * Creates a directory and its missing parents, like `mkdir -p`, in at most two `mkdir` calls per
 * path level. Node's own `{ recursive: true }` loops forever, at full CPU and past every signal,
 * under a pseudo-filesystem that answers ENOENT for a child it can never hold (`/proc/x/y`): a
 * mistyped `watch --file` or `artefacts.dir` would hang the process. Here an ENOENT once the
 * parent exists is final and thrown as it is.
 */
export async function makeDirs(dir: string): Promise<void> {
  const path = resolve(dir);
  try {
    await mkdir(path);
    return;
  } catch (err) {
    if (await existingDir(path, err)) return;
    if (code(err) !== 'ENOENT' || dirname(path) === path) throw err;
  }
  await makeDirs(dirname(path));
  try {
    await mkdir(path);
  } catch (err) {
    // made meanwhile by another process, or refused for good: the parent exists now, never retried
    if (!(await existingDir(path, err))) throw err;
  }
}

/** Whether a failed mkdir met a directory already there (a file there is the caller's error). */
async function existingDir(path: string, err: unknown): Promise<boolean> {
  if (code(err) !== 'EEXIST') return false;
  return (await stat(path).catch(() => null))?.isDirectory() ?? false;
}

function code(err: unknown): string | undefined {
  return (err as { code?: string } | null)?.code;
}
