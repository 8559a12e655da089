import { setTimeout as sleep } from 'node:timers/promises';
import { SandtrailError } from '../errors/index.js';
import { redactWebhook } from './redactWebhook.js';

/** How hard a webhook is tried before its notification is dead-lettered. */
export interface WebhookOptions {
  /** Tries in all (default 4). */
  attempts?: number;
  /** Delay before the first retry, doubled each time, jittered (default 500 ms). */
  backoffMs?: number;
  /** Timeout of one POST, connection and answer included (default 10 s). */
  timeoutMs?: number;
  /** The configured webhooks by name (config `webhooks`): what a watch's webhook name resolves to. */
  targets?: Readonly<Record<string, string>>;
}

/** What a caller tracking the receiver's health (WebhookBreaker) is told, and may decide. */
export interface WebhookTries {
  /** Each try that failed in a way a retry could fix (timeout, connection, 5xx); `slow`: it timed out. */
  onTryFailed(slow: boolean): void;
  /** The notification's tries are spent, each failed in such a way. */
  onGaveUp(): void;
  /** Asked before each retry: false stops the retries (the receiver is known down). */
  mayRetry(): boolean;
  /** The receiver answered, refusing this notification (a 4xx, a redirect): it is there, not down. */
  onRefused?(): void;
}

export const WEBHOOK_DEFAULTS: Readonly<Required<Omit<WebhookOptions, 'targets'>>> = Object.freeze({
  attempts: 4,
  backoffMs: 500,
  timeoutMs: 10_000,
});

/** Statuses a receiver may answer differently next time (overloaded, restarting, rate-limiting). */
const RETRYABLE_STATUS = new Set([408, 425, 429, 500, 502, 503, 504]);

/** Whether a try ended on its timeout (the receiver hangs), not on an answer or a refusal. */
function isTimeout(err: unknown): boolean {
  const name = (err as { name?: string } | null)?.name;
  return name === 'TimeoutError' || name === 'AbortError';
}

/** Why a try failed, without the URL (it may carry a secret): the cause's code or the timeout. */
function reasonOf(err: unknown, timeoutMs: number): string {
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (isTimeout(err)) return `timed out after ${timeoutMs} ms`;
  const cause = e?.cause?.code ?? e?.cause?.message;
  return cause ? `unreachable (${cause})` : `failed (${e?.name ?? 'Error'})`;
}

/**
 * POSTs a JSON body to a webhook; any 2xx is delivered. Connection errors, timeouts, 408, 425,
 * 429 and 5xx are retried with exponential backoff; any other answer (a 4xx, or a redirect,
 * which is not followed so the body never goes to a host the watch did not name) fails at once.
 * Resolves with the tries it took; throws WEBHOOK_FAILED, whose message names the host only.
 */
export async function postWebhook(url: string, json: string, o: WebhookOptions = {}, health?: WebhookTries): Promise<number> {
  const { attempts, backoffMs, timeoutMs } = { ...WEBHOOK_DEFAULTS, ...o };
  let reason = 'not tried';
  let tries = 0;
  while (tries < Math.max(1, attempts)) {
    tries += 1;
    let retryable = true;
    let slow = false;
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': 'sandtrail-watch' },
        body: json,
        redirect: 'manual',
        signal: AbortSignal.timeout(timeoutMs),
      });
      // the answer's body is not needed: release the connection
      await res.body?.cancel().catch(() => undefined);
      if (res.status >= 200 && res.status < 300) return tries;
      reason = `answered ${res.status}`;
      retryable = RETRYABLE_STATUS.has(res.status);
    } catch (err) {
      reason = reasonOf(err, timeoutMs);
      slow = isTimeout(err);
    }
    if (retryable) health?.onTryFailed(slow);
    else health?.onRefused?.();
    if (retryable && tries >= attempts) health?.onGaveUp();
    if (!retryable || tries >= attempts || health?.mayRetry() === false) break;
    // jittered, so many notifications failing together do not retry in lockstep
    await sleep(backoffMs * 2 ** (tries - 1) * (0.5 + Math.random() / 2));
    // asked again after the pause: tries failing together (a receiver that hangs) open the breaker meanwhile
    if (health?.mayRetry() === false) break;
  }
  throw new SandtrailError('WEBHOOK_FAILED', `webhook ${redactWebhook(url)} ${reason} (${tries} ${tries === 1 ? 'try' : 'tries'})`, {
    tries,
  });
}
