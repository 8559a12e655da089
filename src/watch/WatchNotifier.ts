import { createHash } from 'node:crypto';
import { messageOf } from '../errors/index.js';
import type { Logger } from '../log/index.js';
import { record } from '../metrics/index.js';
import { deadLetterId, type DeadLetterInput, type DeadLetterStore, type Watch, type WatchHit } from '../store/index.js';
import { appendHitLine } from './appendHitLine.js';
import { WEBHOOK_DEFAULTS, type WebhookOptions } from './postWebhook.js';
import { WebhookBreaker } from './WebhookBreaker.js';
import { shownWebhook } from './webhookUrl.js';

type Channel = 'file' | 'webhook';

/** The notification of a hit, as appended to files, POSTed to webhooks and kept in dead letters. */
export function hitJson(hit: WatchHit): string {
  return JSON.stringify(hit);
}

/**
 * The dead letter of a notification that could not be delivered: stage `watch`, batch
 * `watch-<name>`, the notification's JSON as raw text. The id is deterministic per hit and
 * channel, so a notification failing twice (a `--retro` re-run) is one entry.
 */
export function notificationLetter(hit: WatchHit, channel: Channel, code: string, message: string): DeadLetterInput {
  const raw = hitJson(hit);
  const batch = `watch-${hit.watch}`;
  return {
    id: deadLetterId('watch', batch, `${hit.behaviourId}@${hit.lastModified}:${channel}`),
    stage: 'watch',
    batch,
    line: null,
    docId: hit.behaviourId,
    code,
    path: channel,
    message,
    raw,
    rawEncoding: 'utf8',
    rawSize: Buffer.byteLength(raw),
    rawSha256: createHash('sha256').update(raw).digest('hex'),
    rawTruncated: false,
  };
}

/**
 * Delivers new hits to their watch's file and webhook, in parallel. A delivery that fails for
 * good (the webhook after its retries, an unwritable file) is dead-lettered and counted; it
 * never fails the caller, whose documents are stored and whose hit is recorded already.
 */
export class WatchNotifier {
  private failures = 0;
  private readonly breaker: WebhookBreaker;

  constructor(
    private readonly dlq: Pick<DeadLetterStore, 'put'>,
    private readonly log: Logger,
    private readonly webhook: WebhookOptions = {},
    breaker?: WebhookBreaker,
  ) {
    this.breaker = breaker ?? new WebhookBreaker(2 * (webhook.attempts ?? WEBHOOK_DEFAULTS.attempts));
  }

  /** Deliveries that failed for good (dead-lettered) since this notifier was made. */
  get undelivered(): number {
    return this.failures;
  }

  async notify(watch: Watch, hit: WatchHit): Promise<void> {
    const json = hitJson(hit);
    const { file, webhook } = watch.notify;
    await Promise.all([
      file ? this.deliver(hit, 'file', 'WATCH_FILE_FAILED', () => appendHitLine(file, json)) : undefined,
      webhook
        ? this.deliver(hit, 'webhook', 'WEBHOOK_FAILED', () => this.breaker.send(webhook, json, this.webhook), shownWebhook(webhook))
        : undefined,
    ]);
  }

  private async deliver(hit: WatchHit, channel: Channel, code: string, send: () => Promise<unknown>, target?: string): Promise<void> {
    try {
      await send();
      record({ m: 'watchNotification', channel, outcome: 'ok' });
      return;
    } catch (err) {
      this.failures++;
      record({ m: 'watchNotification', channel, outcome: 'failed' });
      const message = messageOf(err);
      // only the redacted target: a webhook URL may carry its secret
      this.log.warn(
        { watch: hit.watch, behaviour: hit.behaviourId, channel, ...(target ? { target } : {}), err: message },
        'watch notification dead-lettered',
      );
      try {
        await this.dlq.put([notificationLetter(hit, channel, code, message)]);
      } catch (putErr) {
        // the hit is recorded (a replay will not notify it again): the log line is all that is left
        this.log.error(
          { watch: hit.watch, behaviour: hit.behaviourId, channel, err: messageOf(putErr) },
          'watch notification lost: dead letter not stored',
        );
      }
    }
  }
}
