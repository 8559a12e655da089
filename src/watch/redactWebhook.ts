/**
 * A webhook URL as it may be shown or logged: scheme and host only. Webhook URLs commonly carry
 * their secret in the path or the query (Slack, Teams, chat bots), so everything after the host
 * is masked; an unparsable value is masked whole.
 */
export function redactWebhook(url: string): string {
  try {
    const u = new URL(url);
    const rest = u.pathname !== '/' || u.search !== '' || u.hash !== '';
    return `${u.protocol}//${u.host}/${rest ? '***' : ''}`;
  } catch {
    return '***';
  }
}
