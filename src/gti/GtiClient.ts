import { SandtrailError, type ErrorCode } from '../errors/index.js';

export interface GtiClientOptions {
  baseUrl: string;
  apiKey: string;
  xTool?: string;
  timeoutMs: number;
  /** Called once per request that reached the service (whatever its status), for the quota ledger. */
  onCall?: (call: { method: string; path: string; status: number }) => Promise<void>;
}

/** Upstream error codes (from `{"error": {"code"}}`) → our stable codes. */
const BY_UPSTREAM: Readonly<Record<string, ErrorCode>> = {
  WrongCredentialsError: 'GTI_AUTH',
  AuthenticationRequiredError: 'GTI_AUTH',
  ForbiddenError: 'GTI_FORBIDDEN',
  NotFoundError: 'GTI_NOT_FOUND',
  NotAvailableYet: 'GTI_NOT_AVAILABLE_YET',
  QuotaExceededError: 'GTI_RATE_LIMITED',
  TooManyRequestsError: 'GTI_RATE_LIMITED',
  TransientError: 'GTI_TRANSIENT',
  DeadlineExceededError: 'GTI_TRANSIENT',
};

function codeFor(status: number, upstream: string | undefined): ErrorCode {
  if (upstream && BY_UPSTREAM[upstream]) return BY_UPSTREAM[upstream];
  if (status === 401) return 'GTI_AUTH';
  if (status === 403) return 'GTI_FORBIDDEN';
  if (status === 404) return 'GTI_NOT_FOUND';
  if (status === 429) return 'GTI_RATE_LIMITED';
  if (status >= 500) return 'GTI_TRANSIENT';
  return 'GTI_BAD_REQUEST';
}

/**
 * The one HTTP client for the GTI API: `x-apikey` and `x-tool` headers, a timeout per request,
 * typed errors with the upstream code, and a hook that records every call in the quota ledger.
 * The key is never part of an error message or a log field.
 */
export class GtiClient {
  private readonly base: string;

  constructor(private readonly o: GtiClientOptions) {
    this.base = o.baseUrl.replace(/\/+$/, '');
  }

  /** GETs a JSON document at a path relative to the versioned base (e.g. `/users/me/overall_quotas`). */
  async getJson(path: string): Promise<unknown> {
    const res = await this.request('GET', path);
    return res.json();
  }

  private async request(method: string, path: string): Promise<Response> {
    const headers: Record<string, string> = { 'x-apikey': this.o.apiKey, accept: 'application/json' };
    if (this.o.xTool) headers['x-tool'] = this.o.xTool;
    let res: Response;
    try {
      res = await fetch(`${this.base}${path}`, { method, headers, signal: AbortSignal.timeout(this.o.timeoutMs) });
    } catch (err) {
      throw new SandtrailError('GTI_NETWORK', `${method} ${path}: ${(err as Error).message}`);
    }
    await this.o.onCall?.({ method, path, status: res.status });
    if (res.ok) return res;
    let upstream: { code?: string; message?: string } = {};
    try {
      upstream = ((await res.json()) as { error?: typeof upstream }).error ?? {};
    } catch {
      // not JSON: the status decides
    }
    const code = codeFor(res.status, upstream.code);
    const hint = code === 'GTI_AUTH' ? ' (check GTI_APIKEY)' : '';
    throw new SandtrailError(code, `${method} ${path}: ${res.status} ${upstream.code ?? ''} ${upstream.message ?? ''}`.trim() + hint, {
      status: res.status,
      upstreamCode: upstream.code,
      retryAfterS: Number(res.headers.get('retry-after')) || undefined,
    });
  }
}
