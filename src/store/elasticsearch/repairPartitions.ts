import type { Client } from '@elastic/elasticsearch';
import { isNotFound } from './classify.js';
import { partitionTemplate } from './lifecycle.js';
import type { EsNames } from './names.js';
import { dayOfIndex } from './partitions.js';

/**
 * Day indices outside the read alias: created by a writer while the index template was missing
 * or predated daily partitions (setup manual, `es setup` not yet run after an upgrade). Writers
 * never write to an index they do not see behind the alias, so such an index is normally empty:
 * it is deleted and the next write creates it from the template. One holding documents (written
 * by something else) joins the alias and the lifecycle policy instead. Returns what was done.
 */
export async function repairPartitions(client: Client, n: EsNames, ilm = true): Promise<string[]> {
  let listed: Record<string, { aliases?: Record<string, unknown> }>;
  try {
    listed = (await client.indices.getAlias({ index: n.pattern })) as typeof listed;
  } catch (err) {
    if (isNotFound(err)) return [];
    throw err;
  }
  const done: string[] = [];
  const lifecycle = (partitionTemplate(n, ilm).settings as { index?: Record<string, unknown> }).index;
  for (const [index, entry] of Object.entries(listed)) {
    if (dayOfIndex(n, index) === undefined || (entry.aliases && n.alias in entry.aliases)) continue;
    const docs = (await client.count({ index })).count;
    if (docs === 0) {
      await client.indices.delete({ index });
      done.push(`deleted empty day index ${index} (created without the current template; the next write creates it again)`);
    } else {
      if (lifecycle) await client.indices.putSettings({ index, settings: { index: lifecycle } });
      await client.indices.updateAliases({ actions: [{ add: { index, alias: n.alias } }] });
      done.push(`attached day index ${index} (${docs} documents) to ${n.alias}${lifecycle ? ` and policy ${n.policy}` : ''}`);
    }
  }
  return done;
}
