import { SandtrailError } from '../errors/index.js';
import { postWebhook, WEBHOOK_DEFAULTS, type WebhookOptions } from './postWebhook.js';
import { webhookUrl } from './webhookUrl.js';

/** A webhook's failures since its last success. */
interface Streak {
  /** Tries failed in a row. */
  failures: number;
  /** One of them timed out: the receiver hangs, and every retry holds the index stage as long. */
  slow: boolean;
  /** A notification spent all its tries meanwhile. */
  spent: boolean;
  openUntil: number;
  probing: boolean;
}

/**
 * Skips a webhook for a while once it keeps failing, so one receiver that hangs or is gone does
 * not hold every chunk of the index stage for the length of its retries (up to 43 s a hit, 8 at a
 * time). It opens after `threshold` tries in a row failed (by default two notifications' worth)
 * once either a try timed out (a receiver that hangs: retries under way stop at once) or a
 * notification spent all its tries (a receiver that refuses or answers 5xx: every notification
 * under way gets its tries, so a receiver down for a few seconds loses nothing). While open, the
 * next notifications are dead-lettered at once for `pauseMs`; then one notification is tried,
 * alone and once, and its outcome closes the breaker or opens it again: any answer closes it (a
 * 4xx or a redirect refuses that notification alone), a failure a retry could fix opens it.
 */
export class WebhookBreaker {
  private readonly states = new Map<string, Streak>();

  constructor(
    private readonly threshold = 2 * WEBHOOK_DEFAULTS.attempts,
    private readonly pauseMs = 60_000,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * POSTs `json` to the webhook `target` names (webhookUrl) through the breaker: WEBHOOK_FAILED at
   * once while it is open or when the name is not configured, one try when it probes, the usual
   * tries otherwise (stopped early if it opens meanwhile).
   */
  async send(target: string, json: string, webhook: WebhookOptions = {}): Promise<void> {
    const url = webhookUrl(target, webhook.targets);
    const admitted = this.admit(url);
    if (typeof admitted === 'object') throw new SandtrailError('WEBHOOK_FAILED', admitted.skip);
    const options = admitted === 'probe' ? { ...webhook, attempts: 1 } : webhook;
    await postWebhook(url, json, options, {
      onTryFailed: (slow) => this.failed(url, slow),
      onGaveUp: () => this.gaveUp(url),
      mayRetry: () => !this.isOpen(url),
      // an answer, even a refusal, puts the webhook back in use: a probe must not stay open for good
      onRefused: () => this.succeeded(url),
    });
    this.succeeded(url);
  }

  /**
   * How to send to `url` now: `skip` with the reason, `probe` (one try: the breaker is testing the
   * receiver), or `send` as usual.
   */
  admit(url: string): { skip: string } | 'probe' | 'send' {
    const s = this.states.get(url);
    if (!s || !this.opened(s)) return 'send';
    if (s.probing || this.now() < s.openUntil) {
      return { skip: `skipped: the webhook failed ${s.failures} tries in a row (tried again every ${this.pauseMs / 1000} s)` };
    }
    s.probing = true;
    return 'probe';
  }

  /** Whether `url` is being skipped now (retries under way stop). */
  isOpen(url: string): boolean {
    const s = this.states.get(url);
    return s !== undefined && this.opened(s);
  }

  succeeded(url: string): void {
    this.states.delete(url);
  }

  /** A try failed in a way a retry could fix; `slow` when it timed out. */
  failed(url: string, slow = false): void {
    const s = this.streak(url);
    s.failures += 1;
    s.slow ||= slow;
    s.probing = false;
    this.pauseIfOpen(s);
  }

  /** A notification spent all its tries. */
  gaveUp(url: string): void {
    const s = this.streak(url);
    s.spent = true;
    this.pauseIfOpen(s);
  }

  private opened(s: Streak): boolean {
    return s.failures >= this.threshold && (s.slow || s.spent);
  }

  private pauseIfOpen(s: Streak): void {
    if (this.opened(s)) s.openUntil = this.now() + this.pauseMs;
  }

  private streak(url: string): Streak {
    let s = this.states.get(url);
    if (!s) {
      s = { failures: 0, slow: false, spent: false, openUntil: 0, probing: false };
      this.states.set(url, s);
    }
    return s;
  }
}
