import type { Config } from '../config/index.js';
import { callSettled, callStarted, callsStopSignal } from './callsInFlight.js';
import { SandtrailError } from '../errors/index.js';
import { GtiClient, type GtiClientOptions } from '../gti/index.js';
import type { QuotaLedger } from './ledger/QuotaLedger.js';

export interface LedgerClientOptions {
  /** Where every call is recorded; none: a command without a shared Redis, whose ledger would vanish with it. */
  ledger?: QuotaLedger;
  /** The ledger's user (default gti.user, else `default`). */
  user?: string;
  /** Shorter than gti.timeoutMs (a health check). */
  timeoutMs?: number;
  beforeCall?: GtiClientOptions['beforeCall'];
  /** Told about a request `beforeCall` let through that got no answer (to give a reservation back). */
  onNoAnswer?: GtiClientOptions['onNoAnswer'];
  /** Told about each call once it is recorded (to count what a run spent). */
  afterCall?: (call: { method: string; path: string; status: number }) => void;
}

/**
 * The GTI client every command and worker uses: the configured key, base, x-tool and timeout, and
 * every request the service answered recorded on the quota ledger (rule-priced there), once, when
 * its status line arrives. That is when the service counts it (rule 1: one unit per request), so
 * an answer whose body is cut mid-transfer is on the ledger, and so is the request that fetches
 * it again; a request that got no answer (refused or reset before the status line, or timed out)
 * is kept apart, charged nothing (QuotaLedger.unanswered).
 */
export function ledgerClient(gti: Config['gti'], o: LedgerClientOptions = {}): GtiClient {
  if (!gti.apiKey) throw new SandtrailError('USAGE', 'set GTI_APIKEY (or SANDTRAIL_GTI_API_KEY) to call the GTI API');
  const user = o.user ?? gti.user ?? 'default';
  return new GtiClient({
    baseUrl: gti.baseUrl,
    apiKey: gti.apiKey,
    xTool: gti.xTool,
    timeoutMs: o.timeoutMs ?? gti.timeoutMs,
    // a stopping process that gives up on its calls ends them (recorded unanswered), not waits for them
    stopSignal: callsStopSignal,
    beforeCall: async (c) => {
      await o.beforeCall?.(c);
      // counted once it goes out: a stopping process waits for its ledger entry
      callStarted();
    },
    onNoAnswer: async (c) => {
      try {
        await o.ledger?.unanswered({ method: c.method, path: c.path, user, group: gti.group }).catch(() => undefined);
      } finally {
        callSettled();
      }
      await o.onNoAnswer?.(c);
    },
    onCall: async (c) => {
      try {
        await o.ledger?.record({ op: 'api', method: c.method, path: c.path, user, group: gti.group });
      } finally {
        callSettled();
      }
      o.afterCall?.(c);
    },
  });
}
