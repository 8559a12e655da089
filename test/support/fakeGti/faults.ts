import { isMinuteId, minuteToMs } from '../../../src/minute/index.js';

/** The next `count` matching requests answer `status` with the upstream error body (and `Retry-After` when given). */
export interface BurstFault {
  status: 429 | 503 | 504;
  count: number;
  retryAfterS?: number;
  /** `feed` (default): only `/api/v3/feeds/...` requests; `all`: every `/api/v3/...` request. Downloads never. */
  paths?: 'feed' | 'all';
}

/** Downloads are throttled to `bytesPerSecond`; only those of `minutes` (minute or hour ids) when given. */
export interface SlowBodyFault {
  bytesPerSecond: number;
  minutes?: string[];
}

/**
 * Downloads send `floor(size * atFraction)` bytes (default half) while advertising the full
 * content-length, then the socket is destroyed. Only those of `minutes` (minute or hour ids) when
 * given; `times` caps how many downloads are cut (default: every one).
 */
export interface TruncateFault {
  minutes?: string[];
  times?: number;
  atFraction?: number;
}

/**
 * The next `times` (default 1) 200 answers of JSON collection pages (`/files/{id}/behaviours`,
 * `/file_behaviours/{id}/attack_techniques`...) whose path starts with `paths` (default
 * `/api/v3/files/`) send half of the body while advertising the full content-length, then the
 * socket is destroyed.
 */
export interface ResetMidBodyFault {
  paths?: string;
  times?: number;
}

/**
 * Artefact downloads (pcap, evtx, memdump, html; through the API endpoint or a feed link) send
 * `floor(size * atFraction)` bytes (default half) while advertising the full content-length, then
 * the socket is destroyed; `times` caps how many are cut (default: every one).
 */
export interface TruncateArtefactFault {
  times?: number;
  atFraction?: number;
}

/**
 * The next `times` (default 1) 200 single-object JSON answers of the file routes (a behaviour
 * report, its `file` relationship, a private file report) whose path starts with `paths`
 * (default `/api/v3/`) send half of the body while advertising the full content-length, then the
 * socket is destroyed.
 */
export interface ResetMidObjectFault {
  paths?: string;
  times?: number;
}

export interface FakeGtiFaults {
  /** Minutes ≥ this (and hours whose last minute is ≥ this) answer 400 NotAvailableYet. */
  notAvailableAfter?: string;
  /**
   * Minute M answers 400 NotAvailableYet until `now() ≥ M + 1 min + lag` (the Scheduler's
   * convention); an hour until its last minute is available.
   */
  notAvailableLagMinutes?: number;
  /** Minutes (or hours) forced to 404 even when the file exists. */
  notFound?: string[];
  /** Minute (or hour) → answer 404 the first N requests, then serve it. */
  notFoundTimes?: Record<string, number>;
  burst?: BurstFault;
  slowBody?: SlowBodyFault;
  truncate?: TruncateFault;
  /** The next N feed requests (`/api/v3/feeds/...`) get their socket destroyed before any response. */
  resetBeforeHeaders?: number;
  /**
   * Files (any of sha256, sha1, md5; any case) whose API routes (`/files/{id}/behaviours`,
   * `/file_behaviours/{sha256}_...` and below, `/private/files/{sha256}`) answer 403 ForbiddenError.
   */
  forbidden?: string[];
  /** Files (any hash form, any case) whose API routes (as for `forbidden`) answer 404 NotFoundError although known. */
  notFoundHashes?: string[];
  resetMidBody?: ResetMidBodyFault;
  resetMidObject?: ResetMidObjectFault;
  /**
   * The next N requests to the file routes (`/api/v3/files/...`, `/api/v3/file_behaviours/...`,
   * `/api/v3/private/...`) get their socket destroyed before any response (status 0: unanswered).
   */
  resetApiBeforeHeaders?: number;
  truncateArtefact?: TruncateArtefactFault;
  /** The next artefact downloads answer these in turn, 200 each: `empty` no bytes, `html` a login page; then the artefact. */
  artefactAnswers?: ('empty' | 'html')[];
  /**
   * Feed batch downloads (minutes and hours) are sent chunked, announcing no content-length, as
   * storage hosts and CDNs often answer; `truncate` then cuts them with no length to compare.
   */
  chunkedDownloads?: boolean;
  /** Minute (or hour) → its next N downloads have one byte flipped mid-file (a CRC error), their length right. */
  corruptTimes?: Record<string, number>;
  /** Minute (or hour) → its next N downloads answer 200 with no bytes at all (chunked when chunkedDownloads). */
  emptyTimes?: Record<string, number>;
  /** Minute (or hour) → the storage host refuses its next N downloads 403 (a signed link expired on the way). */
  storageForbiddenTimes?: Record<string, number>;
}

const ID_RE = /^\d{10}(\d{2})?$/;

/** Consumes one of the counts left for `id`; false when none is left. */
function take(left: Map<string, number>, id: string): boolean {
  const n = left.get(id) ?? 0;
  if (n <= 0) return false;
  left.set(id, n - 1);
  return true;
}
const HASH_RE = /^(?:[0-9a-f]{32}|[0-9a-f]{40}|[0-9a-f]{64})$/i;

function checkHashes(where: string, list: unknown): void {
  if (!Array.isArray(list)) throw new RangeError(`fake GTI ${where}: expected a list of hashes, got ${JSON.stringify(list)}`);
  for (const h of list as unknown[])
    if (typeof h !== 'string' || !HASH_RE.test(h))
      throw new RangeError(`fake GTI ${where}: expected an md5, sha1 or sha256 (hex), got ${JSON.stringify(h)}`);
}

function checkFraction(where: string, a: number | undefined): void {
  if (a !== undefined && !(a >= 0 && a < 1)) throw new RangeError(`fake GTI ${where} must be in [0, 1), got ${a}`);
}

function checkId(where: string, id: unknown): void {
  if (typeof id !== 'string' || !ID_RE.test(id))
    throw new RangeError(`fake GTI ${where}: expected a YYYYMMDDhhmm or YYYYMMDDhh id, got ${JSON.stringify(id)}`);
}

function checkCount(where: string, n: unknown): void {
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0)
    throw new RangeError(`fake GTI ${where}: expected a non-negative integer, got ${JSON.stringify(n)}`);
}

function validate(f: FakeGtiFaults): void {
  if (f.notAvailableAfter !== undefined && !isMinuteId(f.notAvailableAfter))
    throw new RangeError(`fake GTI notAvailableAfter: expected YYYYMMDDhhmm, got ${JSON.stringify(f.notAvailableAfter)}`);
  if (f.notAvailableLagMinutes !== undefined && !(Number.isFinite(f.notAvailableLagMinutes) && f.notAvailableLagMinutes >= 0))
    throw new RangeError(`fake GTI notAvailableLagMinutes: expected a number ≥ 0, got ${f.notAvailableLagMinutes}`);
  for (const id of f.notFound ?? []) checkId('notFound', id);
  for (const [id, n] of Object.entries(f.notFoundTimes ?? {})) {
    checkId('notFoundTimes', id);
    checkCount(`notFoundTimes[${id}]`, n);
  }
  if (f.burst) {
    if (![429, 503, 504].includes(f.burst.status)) throw new RangeError(`fake GTI burst.status: 429, 503 or 504, got ${f.burst.status}`);
    checkCount('burst.count', f.burst.count);
    if (f.burst.retryAfterS !== undefined) checkCount('burst.retryAfterS', f.burst.retryAfterS);
  }
  if (f.slowBody) {
    if (!(f.slowBody.bytesPerSecond > 0))
      throw new RangeError(`fake GTI slowBody.bytesPerSecond must be > 0, got ${f.slowBody.bytesPerSecond}`);
    for (const id of f.slowBody.minutes ?? []) checkId('slowBody.minutes', id);
  }
  if (f.truncate) {
    checkFraction('truncate.atFraction', f.truncate.atFraction);
    if (f.truncate.times !== undefined) checkCount('truncate.times', f.truncate.times);
    for (const id of f.truncate.minutes ?? []) checkId('truncate.minutes', id);
  }
  if (f.resetBeforeHeaders !== undefined) checkCount('resetBeforeHeaders', f.resetBeforeHeaders);
  if (f.forbidden !== undefined) checkHashes('forbidden', f.forbidden);
  if (f.notFoundHashes !== undefined) checkHashes('notFoundHashes', f.notFoundHashes);
  if (f.resetMidBody) {
    const p = f.resetMidBody.paths;
    if (p !== undefined && (typeof p !== 'string' || !p.startsWith('/')))
      throw new RangeError(`fake GTI resetMidBody.paths: expected a path prefix starting with /, got ${JSON.stringify(p)}`);
    if (f.resetMidBody.times !== undefined) checkCount('resetMidBody.times', f.resetMidBody.times);
  }
  if (f.resetMidObject) {
    const p = f.resetMidObject.paths;
    if (p !== undefined && (typeof p !== 'string' || !p.startsWith('/')))
      throw new RangeError(`fake GTI resetMidObject.paths: expected a path prefix starting with /, got ${JSON.stringify(p)}`);
    if (f.resetMidObject.times !== undefined) checkCount('resetMidObject.times', f.resetMidObject.times);
  }
  if (f.resetApiBeforeHeaders !== undefined) checkCount('resetApiBeforeHeaders', f.resetApiBeforeHeaders);
  for (const key of ['corruptTimes', 'emptyTimes', 'storageForbiddenTimes'] as const) {
    for (const [id, n] of Object.entries(f[key] ?? {})) {
      checkId(key, id);
      checkCount(`${key}[${id}]`, n);
    }
  }
  if (f.truncateArtefact) {
    checkFraction('truncateArtefact.atFraction', f.truncateArtefact.atFraction);
    if (f.truncateArtefact.times !== undefined) checkCount('truncateArtefact.times', f.truncateArtefact.times);
  }
}

/** The upstream error a burst answers with. */
export interface BurstAnswer {
  status: 429 | 503 | 504;
  code: string;
  message: string;
  retryAfterS: number | undefined;
}

/** Current faults plus the counters they consume. */
export class FaultState {
  private f: FakeGtiFaults = {};
  private notFoundLeft = new Map<string, number>();
  private burstLeft = 0;
  private burstFlip = false;
  private truncateLeft = 0;
  private resetLeft = 0;
  private resetMidBodyLeft = 0;
  private resetMidObjectLeft = 0;
  private apiResetLeft = 0;
  private truncateArtefactLeft = 0;
  private artefactAnswersLeft: ('empty' | 'html')[] = [];
  private corruptLeft = new Map<string, number>();
  private emptyLeft = new Map<string, number>();
  private storageForbiddenLeft = new Map<string, number>();

  constructor(initial: FakeGtiFaults | undefined) {
    if (initial) this.set(initial);
  }

  /** Merges `patch` into the current faults (a key given as `undefined` removes that fault); counters of given keys restart. */
  set(patch: FakeGtiFaults): void {
    validate(patch);
    const next: FakeGtiFaults = { ...this.f };
    for (const [k, v] of Object.entries(patch) as [keyof FakeGtiFaults, unknown][]) {
      if (v === undefined) delete next[k];
      else (next as Record<string, unknown>)[k] = structuredClone(v);
    }
    this.f = next;
    if ('notFoundTimes' in patch) this.notFoundLeft = new Map(Object.entries(patch.notFoundTimes ?? {}));
    if ('burst' in patch) {
      this.burstLeft = patch.burst?.count ?? 0;
      this.burstFlip = false;
    }
    if ('truncate' in patch) this.truncateLeft = patch.truncate ? (patch.truncate.times ?? Number.POSITIVE_INFINITY) : 0;
    if ('resetBeforeHeaders' in patch) this.resetLeft = patch.resetBeforeHeaders ?? 0;
    if ('resetMidBody' in patch) this.resetMidBodyLeft = patch.resetMidBody ? (patch.resetMidBody.times ?? 1) : 0;
    if ('resetMidObject' in patch) this.resetMidObjectLeft = patch.resetMidObject ? (patch.resetMidObject.times ?? 1) : 0;
    if ('resetApiBeforeHeaders' in patch) this.apiResetLeft = patch.resetApiBeforeHeaders ?? 0;
    if ('corruptTimes' in patch) this.corruptLeft = new Map(Object.entries(patch.corruptTimes ?? {}));
    if ('emptyTimes' in patch) this.emptyLeft = new Map(Object.entries(patch.emptyTimes ?? {}));
    if ('storageForbiddenTimes' in patch) this.storageForbiddenLeft = new Map(Object.entries(patch.storageForbiddenTimes ?? {}));
    if ('truncateArtefact' in patch)
      this.truncateArtefactLeft = patch.truncateArtefact ? (patch.truncateArtefact.times ?? Number.POSITIVE_INFINITY) : 0;
    if ('artefactAnswers' in patch) this.artefactAnswersLeft = [...(patch.artefactAnswers ?? [])];
  }

  clear(): void {
    this.f = {};
    this.notFoundLeft.clear();
    this.burstLeft = 0;
    this.truncateLeft = 0;
    this.resetLeft = 0;
    this.resetMidBodyLeft = 0;
    this.resetMidObjectLeft = 0;
    this.apiResetLeft = 0;
    this.truncateArtefactLeft = 0;
    this.artefactAnswersLeft = [];
    this.corruptLeft.clear();
    this.emptyLeft.clear();
    this.storageForbiddenLeft.clear();
  }

  /** The faults in force, counters showing what is left. */
  snapshot(): FakeGtiFaults {
    const s = structuredClone(this.f);
    if (s.notFoundTimes) s.notFoundTimes = Object.fromEntries(this.notFoundLeft);
    if (s.burst) s.burst.count = this.burstLeft;
    if (s.truncate && this.truncateLeft !== Number.POSITIVE_INFINITY) s.truncate.times = this.truncateLeft;
    if (s.resetBeforeHeaders !== undefined) s.resetBeforeHeaders = this.resetLeft;
    if (s.resetMidBody) s.resetMidBody.times = this.resetMidBodyLeft;
    if (s.resetMidObject) s.resetMidObject.times = this.resetMidObjectLeft;
    if (s.resetApiBeforeHeaders !== undefined) s.resetApiBeforeHeaders = this.apiResetLeft;
    if (s.truncateArtefact && this.truncateArtefactLeft !== Number.POSITIVE_INFINITY) s.truncateArtefact.times = this.truncateArtefactLeft;
    if (s.artefactAnswers) s.artefactAnswers = [...this.artefactAnswersLeft];
    if (s.corruptTimes) s.corruptTimes = Object.fromEntries(this.corruptLeft);
    if (s.emptyTimes) s.emptyTimes = Object.fromEntries(this.emptyLeft);
    if (s.storageForbiddenTimes) s.storageForbiddenTimes = Object.fromEntries(this.storageForbiddenLeft);
    return s;
  }

  takeReset(): boolean {
    if (this.resetLeft <= 0) return false;
    this.resetLeft -= 1;
    return true;
  }

  /** True when this file-route request must be reset before any response (consumes a resetApiBeforeHeaders count). */
  takeApiReset(): boolean {
    if (this.apiResetLeft <= 0) return false;
    this.apiResetLeft -= 1;
    return true;
  }

  takeBurst(isFeed: boolean): BurstAnswer | null {
    const b = this.f.burst;
    if (!b || this.burstLeft <= 0) return null;
    if ((b.paths ?? 'feed') === 'feed' && !isFeed) return null;
    this.burstLeft -= 1;
    let code: string;
    let message: string;
    if (b.status === 429) {
      code = this.burstFlip ? 'TooManyRequestsError' : 'QuotaExceededError';
      message = this.burstFlip ? 'Too many requests' : 'Quota exceeded';
      this.burstFlip = !this.burstFlip;
    } else if (b.status === 503) {
      code = 'TransientError';
      message = 'Transient error, please retry';
    } else {
      code = 'DeadlineExceededError';
      message = 'Deadline exceeded';
    }
    return { status: b.status, code, message, retryAfterS: b.retryAfterS };
  }

  /** True when the minute (12 digits) or hour (10 digits) is not published yet at `nowMs`. */
  notAvailable(id: string, nowMs: number): boolean {
    const last = id.length === 10 ? `${id}59` : id;
    if (this.f.notAvailableAfter !== undefined && last >= this.f.notAvailableAfter) return true;
    const lag = this.f.notAvailableLagMinutes;
    return lag !== undefined && minuteToMs(last) + 60_000 + lag * 60_000 > nowMs;
  }

  /** True when this request for `id` must answer 404 whatever the disk holds (consumes a notFoundTimes count). */
  takeNotFound(id: string): boolean {
    if (this.f.notFound?.includes(id)) return true;
    const left = this.notFoundLeft.get(id) ?? 0;
    if (left <= 0) return false;
    this.notFoundLeft.set(id, left - 1);
    return true;
  }

  /** True when this download of `id` must be sent corrupt (consumes a `corruptTimes` count). */
  takeCorrupt(id: string): boolean {
    return take(this.corruptLeft, id);
  }

  /** True when this download of `id` must be sent empty (consumes an `emptyTimes` count). */
  takeEmpty(id: string): boolean {
    return take(this.emptyLeft, id);
  }

  /** True when the storage host must refuse this download of `id` (consumes a `storageForbiddenTimes` count). */
  takeStorageForbidden(id: string): boolean {
    return take(this.storageForbiddenLeft, id);
  }

  /** Whether feed downloads go out chunked, without a content-length. */
  get chunkedDownloads(): boolean {
    return this.f.chunkedDownloads === true;
  }

  /** Bytes per second for the download of `id`, or null when not throttled. */
  slowFor(id: string): number | null {
    const s = this.f.slowBody;
    if (!s || (s.minutes && !s.minutes.includes(id))) return null;
    return s.bytesPerSecond;
  }

  /** Bytes to send before cutting the download of `id` (`size` bytes), or null to send it whole. */
  takeTruncate(id: string, size: number): number | null {
    const t = this.f.truncate;
    if (!t || this.truncateLeft <= 0 || (t.minutes && !t.minutes.includes(id))) return null;
    this.truncateLeft -= 1;
    return Math.floor(size * (t.atFraction ?? 0.5));
  }

  /** True when one of `hashes` (a file's sha256, sha1, md5, or the id asked for) is listed in `forbidden` / `notFoundHashes`. */
  fileBlocked(which: 'forbidden' | 'notFoundHashes', hashes: readonly string[]): boolean {
    const list = this.f[which];
    if (!list || list.length === 0) return false;
    const lower = new Set(list.map((h) => h.toLowerCase()));
    return hashes.some((h) => lower.has(h.toLowerCase()));
  }

  /** True when this 200 collection page at `path` must be cut mid-body (consumes a resetMidBody count). */
  takeResetMidBody(path: string): boolean {
    const r = this.f.resetMidBody;
    if (!r || this.resetMidBodyLeft <= 0 || !path.startsWith(r.paths ?? '/api/v3/files/')) return false;
    this.resetMidBodyLeft -= 1;
    return true;
  }

  /** True when this 200 single-object answer at `path` must be cut mid-body (consumes a resetMidObject count). */
  takeResetMidObject(path: string): boolean {
    const r = this.f.resetMidObject;
    if (!r || this.resetMidObjectLeft <= 0 || !path.startsWith(r.paths ?? '/api/v3/')) return false;
    this.resetMidObjectLeft -= 1;
    return true;
  }

  /** What the next artefact download answers instead of the artefact (artefactAnswers), if anything. */
  takeArtefactAnswer(): 'empty' | 'html' | undefined {
    return this.artefactAnswersLeft.shift();
  }

  /** Bytes to send before cutting an artefact download of `size` bytes, or null to send it whole. */
  takeTruncateArtefact(size: number): number | null {
    const t = this.f.truncateArtefact;
    if (!t || this.truncateArtefactLeft <= 0) return null;
    this.truncateArtefactLeft -= 1;
    return Math.floor(size * (t.atFraction ?? 0.5));
  }
}
