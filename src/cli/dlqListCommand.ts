import { shownStoreSpec } from '../store/index.js';

/** The command that lists a store's dead letters, as pasted into a shell (credentials masked). */
export function dlqListCommand(storeSpec: string, more = ''): string {
  const spec = shownStoreSpec(storeSpec);
  return `sandtrail dlq list${more} --store ${/^[\w@%+=:,./-]+$/.test(spec) ? spec : `'${spec.replaceAll("'", "'\\''")}'`}`;
}
