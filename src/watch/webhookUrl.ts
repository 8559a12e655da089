import { SandtrailError } from '../errors/index.js';
import { redactWebhook } from './redactWebhook.js';

/** A watch's webhook that is a URL: kept by a store written before webhooks were named in the configuration. */
const isStoredUrl = (target: string): boolean => target.includes('://');

/**
 * The URL a watch's webhook names: the configured webhook of that name (`webhooks` of this
 * process's configuration), or the URL itself where an earlier version stored one. A name this
 * process has not configured is WEBHOOK_FAILED, naming the setting: the notification is
 * dead-lettered, and `dlq replay` sends it once the webhook is configured.
 */
export function webhookUrl(target: string, targets: Readonly<Record<string, string>> = {}): string {
  if (isStoredUrl(target)) return target;
  const url = Object.hasOwn(targets, target) ? targets[target] : undefined;
  if (url) return url;
  throw new SandtrailError(
    'WEBHOOK_FAILED',
    `no webhook named "${target}" in this process's configuration: set webhooks.${target} in its config file or SANDTRAIL_WEBHOOK_${target.toUpperCase()}=URL (name with - only in a config file)`,
  );
}

/** A watch's webhook as it may be shown or logged: its name, or a stored URL's scheme and host only. */
export function shownWebhook(target: string): string {
  return isStoredUrl(target) ? redactWebhook(target) : target;
}

/** Whether a watch's webhook is a URL kept in the store (by an earlier version), not a name. */
export function webhookUrlInStore(target: string | undefined): boolean {
  return target !== undefined && isStoredUrl(target);
}
