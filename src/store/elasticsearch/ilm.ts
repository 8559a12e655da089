import type { Client } from '@elastic/elasticsearch';

/**
 * Whether the cluster has index lifecycle management. A node without the ILM module (a build
 * without x-pack-ilm, as Elastic's integration-test distribution; some managed offerings) answers
 * its routes with "no handler found" (400) or "Incorrect HTTP method" (405): sandtrail then sets up
 * the day indices without a policy and its own retention deletes the expired days (index workers,
 * `prune`). A refusal (403: no `read_ilm` privilege) means ILM is there.
 */
export async function clusterHasIlm(client: Client, signal?: AbortSignal): Promise<boolean> {
  try {
    await client.ilm.getStatus({}, signal ? { signal } : {});
    return true;
  } catch (err) {
    if (isMissingRoute(err)) return false;
    const status = (err as { meta?: { statusCode?: number } }).meta?.statusCode;
    if (status === 403 || status === 401) return true;
    throw err;
  }
}

/** An answer saying the node has no handler for the route (a module it lacks), not a refusal or a fault. */
export function isMissingRoute(err: unknown): boolean {
  const meta = (err as { meta?: { statusCode?: number; body?: unknown } }).meta;
  if (meta?.statusCode !== 400 && meta?.statusCode !== 405) return false;
  const body = meta.body;
  const text =
    typeof body === 'string' ? body : typeof (body as { error?: unknown })?.error === 'string' ? (body as { error: string }).error : '';
  return /^no handler found for uri|^Incorrect HTTP method for uri/.test(text);
}

/**
 * The version the cluster runs: `GET /`, or the local node's when the node lacks that route (the
 * `rest-root` module, absent from Elastic's integration-test distribution).
 */
export async function clusterVersion(
  client: Client,
  o: { signal?: AbortSignal; requestTimeout?: number; maxRetries?: number } = {},
): Promise<string> {
  try {
    return (await client.info({}, o)).version.number;
  } catch (err) {
    if (!isMissingRoute(err)) throw err;
    const r = await client.nodes.info({ node_id: '_local', metric: '_none', filter_path: 'nodes.*.version' }, o);
    const version = Object.values(r.nodes ?? {})[0]?.version;
    if (!version) throw err;
    return version;
  }
}
