import { SandtrailError } from '../errors/index.js';
import { postWebhook, WEBHOOK_DEFAULTS, type WebhookOptions } from './postWebhook.js';

/**
 * Skips a webhook for a while once it keeps failing, so one receiver that hangs or is gone does
 * not hold every chunk of the index stage for the length of its retries (up to 43 s a hit, 8 at a
 * time): after `threshold` tries in a row failed (timeouts, refused connections, 5xx; by default
 * two notifications' worth, so one notification always gets all its tries), retries under way
 * stop and the next notifications are dead-lettered at once for `pauseMs`; then one notification
 * is tried, alone and once, and its outcome closes the breaker or opens it again.
 */
export class WebhookBreaker {
  private readonly states = new Map<string, { failures: number; openUntil: number; probing: boolean }>();

  constructor(
    private readonly threshold = 2 * WEBHOOK_DEFAULTS.attempts,
    private readonly pauseMs = 60_000,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * POSTs `json` to `url` through the breaker: WEBHOOK_FAILED at once while it is open, one try
   * when it probes, the usual tries otherwise (stopped early if it opens meanwhile).
   */
  async send(url: string, json: string, webhook: WebhookOptions = {}): Promise<void> {
    const admitted = this.admit(url);
    if (typeof admitted === 'object') throw new SandtrailError('WEBHOOK_FAILED', admitted.skip);
    const options = admitted === 'probe' ? { ...webhook, attempts: 1 } : webhook;
    await postWebhook(url, json, options, { onTryFailed: () => this.failed(url), mayRetry: () => !this.isOpen(url) });
    this.succeeded(url);
  }

  /**
   * How to send to `url` now: `skip` with the reason, `probe` (one try: the breaker is testing the
   * receiver), or `send` as usual.
   */
  admit(url: string): { skip: string } | 'probe' | 'send' {
    const s = this.states.get(url);
    if (!s || s.failures < this.threshold) return 'send';
    if (s.probing || this.now() < s.openUntil) {
      return { skip: `skipped: the webhook failed ${s.failures} tries in a row (tried again every ${this.pauseMs / 1000} s)` };
    }
    s.probing = true;
    return 'probe';
  }

  /** Whether `url` is being skipped now (retries under way stop). */
  isOpen(url: string): boolean {
    const s = this.states.get(url);
    return s !== undefined && s.failures >= this.threshold;
  }

  succeeded(url: string): void {
    this.states.delete(url);
  }

  failed(url: string): void {
    const s = this.states.get(url) ?? { failures: 0, openUntil: 0, probing: false };
    s.failures += 1;
    s.probing = false;
    if (s.failures >= this.threshold) s.openUntil = this.now() + this.pauseMs;
    this.states.set(url, s);
  }
}
