import { timingSafeEqual } from 'node:crypto';
import { SandtrailError } from '../errors/index.js';

/** The server's credentials: a bearer token, basic-auth user and password, or none. */
export interface OpsCredentials {
  token?: string;
  username?: string;
  password?: string;
}

/** True for addresses only this machine can reach. */
export function isLoopback(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || /^127\.\d+\.\d+\.\d+$/.test(h);
}

/**
 * Refuses, before anything listens, a server bound beyond loopback without credentials: metrics
 * name queues and operations, and a dashboard can act on jobs.
 */
export function assertSafeBinding(host: string, c: OpsCredentials): void {
  if (isLoopback(host) || c.token || (c.username && c.password)) return;
  throw new SandtrailError(
    'CONFIG_INVALID',
    `http.host ${host} is reachable beyond this machine: set http.token (SANDTRAIL_HTTP_TOKEN) or http.username and http.password, or bind 127.0.0.1`,
  );
}

/**
 * Whether a request's Host header names this machine. A server without credentials binds loopback
 * only, yet a web page its user opens can still reach it under the page's own name through DNS
 * rebinding; such requests carry that name and are refused.
 */
export function loopbackHostHeader(host: string | undefined): boolean {
  if (!host) return false;
  const name = host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.replace(/:\d*$/, '');
  return isLoopback(name);
}

/** Compares a secret in constant time (for equal lengths), so a wrong guess says nothing of the right one. */
export function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Whether an Authorization header carries the configured credentials (always true when none are configured). */
export function authorized(header: string | undefined, c: OpsCredentials): boolean {
  if (!c.token && !(c.username && c.password)) return true;
  if (!header) return false;
  const [scheme, value = ''] = header.split(/\s+/, 2);
  if (c.token && scheme?.toLowerCase() === 'bearer') return sameSecret(value, c.token);
  if (c.username && c.password && scheme?.toLowerCase() === 'basic') {
    const decoded = Buffer.from(value, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    return colon > 0 && sameSecret(decoded.slice(0, colon), c.username) && sameSecret(decoded.slice(colon + 1), c.password);
  }
  return false;
}
