import type { Config } from '../config/index.js';
import { errorCode, messageOf } from '../errors/index.js';
import { ledgerClient, QuotaLedger } from '../quota/index.js';
import { openRedisProbe } from '../queue/index.js';
import { checkOf, type CheckResult } from './CheckResult.js';

export interface CheckGtiOptions {
  /** The shared Redis whose ledger records the quota read; none: not recorded (as `quota check`). */
  redisUrl?: string;
  redisCluster?: boolean;
  queuePrefix: string;
  timeoutMs: number;
  signal: AbortSignal;
}

type QuotaDoc = { data?: { api_requests_daily?: { user?: { allowed?: unknown; used?: unknown } } } };

/** "988 of 1000 API requests left today", or '' when the document does not say. */
function allowance(doc: QuotaDoc): string {
  const q = doc.data?.api_requests_daily?.user;
  if (typeof q?.allowed !== 'number' || typeof q.used !== 'number') return '';
  return `; ${Math.max(0, q.allowed - q.used)} of ${q.allowed} API requests left today`;
}

/**
 * The GTI key: read `/users/{gti.user}/overall_quotas` (0 units, rule 2, recorded on the ledger
 * like every upstream call). A refused key fails; anything else the service answers only warns,
 * since the key itself may be fine. The key never appears in a result.
 */
export async function checkGti(gti: Config['gti'], o: CheckGtiOptions): Promise<CheckResult> {
  const c = checkOf('gti', 'GTI API key');
  if (!gti.apiKey) {
    return c.warn(
      'no GTI_APIKEY: only needed for --source api, run, mirror, lookup, fetch, private lookup and artefact endpoints',
      'set GTI_APIKEY when using those',
    );
  }
  if (!gti.user) {
    return c.warn(
      'GTI_APIKEY is set but not checked: SANDTRAIL_GTI_USER is unset',
      'set SANDTRAIL_GTI_USER (the user id the key belongs to) so the key can be checked at 0 units',
    );
  }
  const user = gti.user;
  const started = Date.now();
  // half the bound for the ledger's Redis: a Redis that does not answer is said as such, in time
  const redis = o.redisUrl ? openRedisProbe(o.redisUrl, Math.ceil(o.timeoutMs / 2), { redisCluster: o.redisCluster }) : undefined;
  let redisCause: Error | undefined;
  redis?.on('error', (err: Error) => (redisCause ??= err));
  const ledger = redis ? new QuotaLedger(redis, o.queuePrefix) : undefined;
  const close = (): void => redis?.disconnect();
  o.signal.addEventListener('abort', close, { once: true });
  try {
    try {
      await redis?.ping();
    } catch (err) {
      // every upstream call is recorded on the ledger: none is made without it
      return c.warn(
        `the key was not checked: the quota ledger's Redis, where every upstream call is recorded, does not answer (${messageOf(redisCause ?? err)})`,
        'fix Redis first (the Redis check says how), then run doctor again',
      );
    }
    const timeoutMs = Math.max(1, Math.min(gti.timeoutMs, o.timeoutMs - (Date.now() - started)));
    const client = ledgerClient(gti, { ledger, user, timeoutMs });
    const doc = (await client.getJson(`/users/${encodeURIComponent(user)}/overall_quotas`)) as QuotaDoc;
    return c.pass(`the key is accepted for user ${user}${allowance(doc)}`);
  } catch (err) {
    const code = errorCode(err);
    if (code === 'GTI_AUTH')
      return c.fail(`the key is refused by ${gti.baseUrl}: ${messageOf(err)}`, `set GTI_APIKEY to a valid key of user ${user}`);
    if (code === 'GTI_NOT_FOUND' || code === 'GTI_FORBIDDEN')
      return c.warn(`the key could not be checked: ${messageOf(err)}`, `check SANDTRAIL_GTI_USER (${user}): the id of the key's user`);
    return c.warn(
      `the key could not be checked: ${messageOf(err)}`,
      `check GTI_BASE_URL (${gti.baseUrl}) and the network, then run doctor again`,
    );
  } finally {
    o.signal.removeEventListener('abort', close);
    close();
  }
}
