import { checkDisk, isWritable, nearestExisting } from './checkDisk.js';
import { checkOf, worst, type CheckResult } from './CheckResult.js';

/**
 * artefacts.dir (absolute): free space where downloads would land, and whether they can be
 * written there at all. Artefacts are optional (`--artefacts`), so an unwritable directory only warns.
 */
export async function checkArtefactsDir(dir: string): Promise<CheckResult> {
  const id = 'artefacts';
  const title = 'Artefacts directory';
  const disk = await checkDisk(id, title, dir, 'artefacts.dir (SANDTRAIL_ARTEFACTS_DIR)');
  const base = await nearestExisting(dir);
  if (await isWritable(base)) return disk;
  const denied = checkOf(id, title).warn(
    `${base} is not writable: --artefacts downloads into ${dir} would fail`,
    'make it writable for this user, or set SANDTRAIL_ARTEFACTS_DIR to a writable directory',
  );
  return worst(denied, disk);
}
