/**
 * Watchlists that alert: matching stored behaviours against the watches (WatchMatcher), recording
 * each hit once and notifying it to a file and a webhook (HitRecorder, WatchNotifier), the index
 * stage's hook (createWatchHook) and the backfill of hits from what is already stored
 * (recordRetroHits). The watches and hits themselves live in the store (store/WatchStore).
 * Depends on store/, metrics/, log/, errors/ only, so queue/ can wire the hook in.
 */
export { createWatchHook } from './createWatchHook.js';
export type { StoredDocsHook, WatchHookOptions } from './createWatchHook.js';
export { recordRetroHits } from './recordRetroHits.js';
export type { RetroResult } from './recordRetroHits.js';
export { WatchMatcher, DEFAULT_REFRESH_MS } from './WatchMatcher.js';
export type { MatchableDoc, WatchMatch, WatchMatcherOptions } from './WatchMatcher.js';
export { HitRecorder } from './HitRecorder.js';
export { WatchNotifier, hitJson, notificationLetter } from './WatchNotifier.js';
export { WebhookBreaker } from './WebhookBreaker.js';
export { postWebhook, WEBHOOK_DEFAULTS } from './postWebhook.js';
export type { WebhookOptions, WebhookTries } from './postWebhook.js';
export { redactWebhook } from './redactWebhook.js';
export { shownWebhook, webhookUrl, webhookUrlInStore } from './webhookUrl.js';
export { redeliverNotification } from './redeliverNotification.js';
