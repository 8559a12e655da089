import { normalizeApiPath } from './normalizeApiPath.js';
import type { Operation, OperationBase, OperationName, TimedOperation } from './Operation.js';
import { parseInstant } from './parseInstant.js';

/** The outcome of parseOperation: the operation with its time settled, or why it was refused. */
export type ParseOperationResult = { ok: true; op: TimedOperation } | { ok: false; message: string };

type Fields = Record<string, unknown>;
type Body = Omit<Operation, keyof OperationBase>;

class Malformed extends Error {}

const SHA256_RE = /^[0-9a-f]{64}$/i;
const METHOD_RE = /^[A-Za-z]+$/;

/**
 * Validates one operation as decoded from JSON. Unknown fields are ignored (so producers can add
 * context), but every field a rule depends on must be present and well typed: a missing or
 * mistyped field is refused rather than guessed at, because a guess would mis-price silently.
 * `null` in an optional field means absent. `at` defaults to `defaultAt` (the caller's "now").
 */
export function parseOperation(value: unknown, defaultAt: Date): ParseOperationResult {
  try {
    return { ok: true, op: parse(value, defaultAt) };
  } catch (err) {
    if (err instanceof Malformed) return { ok: false, message: err.message };
    throw err;
  }
}

function parse(value: unknown, defaultAt: Date): TimedOperation {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new Malformed(`an operation must be a JSON object, got ${describe(value)}`);
  }
  const o = value as Fields;
  if (!Object.hasOwn(o, 'op') || typeof o.op !== 'string') throw new Malformed(`"op" must be a string, got ${describe(o.op)}`);
  const name = o.op;
  if (!Object.hasOwn(BODIES, name)) {
    throw new Malformed(`unknown op ${JSON.stringify(name)} (expected one of ${Object.keys(BODIES).join(', ')})`);
  }
  const ctx = `op "${name}"`;
  const user = text(o, 'user', ctx);
  if (user === undefined) throw new Malformed(`${ctx}: "user" is required`);
  const group = text(o, 'group', ctx);
  const atText = text(o, 'at', ctx);
  let at = defaultAt;
  if (atText !== undefined) {
    const parsed = parseInstant(atText);
    if (!parsed) throw new Malformed(`${ctx}: "at" must be an ISO-8601 date-time, got ${describe(atText)}`);
    at = parsed;
  }
  const body = BODIES[name as OperationName](o, ctx);
  return { ...body, user, ...(group !== undefined ? { group } : {}), at } as TimedOperation;
}

/** Per op: reads and checks the fields that op's rule needs. */
const BODIES: Record<OperationName, (o: Fields, ctx: string) => Body> = {
  api: (o, ctx) => {
    const method = required(text(o, 'method', ctx), 'method', ctx);
    if (!METHOD_RE.test(method)) throw new Malformed(`${ctx}: "method" must be an HTTP method, got ${describe(method)}`);
    const path = required(text(o, 'path', ctx), 'path', ctx);
    if (normalizeApiPath(path) === null) throw new Malformed(`${ctx}: "path" is not a usable URL or path: ${describe(path)}`);
    const invalidId = flag(o, 'invalid_id', ctx);
    return { op: 'api', method: method.toUpperCase(), path, ...(invalidId !== undefined ? { invalid_id: invalidId } : {}) };
  },
  ioc_delta: (o, ctx) => ({ op: 'ioc_delta', ioc_count: requiredCount(o, 'ioc_count', ctx) }),
  ioc_backfill: (o, ctx) => ({ op: 'ioc_backfill', ioc_count: requiredCount(o, 'ioc_count', ctx) }),
  file_upload: (o, ctx) => {
    const sha256 = required(text(o, 'sha256', ctx), 'sha256', ctx);
    if (!SHA256_RE.test(sha256)) throw new Malformed(`${ctx}: "sha256" must be 64 hex digits, got ${describe(sha256)}`);
    const known = required(flag(o, 'known', ctx), 'known', ctx);
    const analysisId = text(o, 'analysis_id', ctx);
    // rule 6 frees GET /files/analyses/{id} for *that* analysis: without its id the grant would be incomplete
    if (!known && analysisId === undefined) throw new Malformed(`${ctx}: "analysis_id" is required when "known" is false (rule 6)`);
    return { op: 'file_upload', sha256: sha256.toLowerCase(), known, ...(analysisId !== undefined ? { analysis_id: analysisId } : {}) };
  },
  asm_api: () => ({ op: 'asm_api' }),
  asm_entity_discovered: (o, ctx) => ({ op: 'asm_entity_discovered', count: requiredCount(o, 'count', ctx) }),
  ui_search: (o, ctx) => ({ op: 'ui_search', kind: oneOf(o, 'kind', ['ioc', 'pivot', 'page'] as const, ctx) }),
  ui_download: () => ({ op: 'ui_download' }),
  livehunt_ruleset: (o, ctx) => ({
    op: 'livehunt_ruleset',
    ruleset_id: required(text(o, 'ruleset_id', ctx), 'ruleset_id', ctx),
    rules: requiredCount(o, 'rules', ctx),
    active: required(flag(o, 'active', ctx), 'active', ctx),
  }),
  retrohunt_job: () => ({ op: 'retrohunt_job' }),
  diff_session: () => ({ op: 'diff_session' }),
  private_scan_file: () => ({ op: 'private_scan_file' }),
  private_scan_url: () => ({ op: 'private_scan_url' }),
  graph_create: (o, ctx) => {
    const visibility = oneOf(o, 'visibility', ['private', 'public'] as const, ctx);
    // a private graph costs nothing per item, but a bad count still says the producer is broken
    const items = count(o, 'items', ctx);
    if (visibility === 'public') return { op: 'graph_create', visibility, items: required(items, 'items', ctx) };
    return { op: 'graph_create', visibility, ...(items !== undefined ? { items } : {}) };
  },
};

function present(o: Fields, key: string): boolean {
  return Object.hasOwn(o, key) && o[key] !== undefined && o[key] !== null;
}

function required<T>(v: T | undefined, key: string, ctx: string): T {
  if (v === undefined) throw new Malformed(`${ctx}: "${key}" is required`);
  return v;
}

/** A non-blank string, or undefined when absent. */
function text(o: Fields, key: string, ctx: string): string | undefined {
  if (!present(o, key)) return undefined;
  const v = o[key];
  if (typeof v !== 'string' || v.trim() === '') throw new Malformed(`${ctx}: "${key}" must be a non-empty string, got ${describe(v)}`);
  return v;
}

function flag(o: Fields, key: string, ctx: string): boolean | undefined {
  if (!present(o, key)) return undefined;
  const v = o[key];
  if (typeof v !== 'boolean') throw new Malformed(`${ctx}: "${key}" must be true or false, got ${describe(v)}`);
  return v;
}

/** A count: a non-negative safe integer (no fractions, no strings, no negatives). */
function count(o: Fields, key: string, ctx: string): number | undefined {
  if (!present(o, key)) return undefined;
  const v = o[key];
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) {
    throw new Malformed(`${ctx}: "${key}" must be a non-negative integer, got ${describe(v)}`);
  }
  return v;
}

function requiredCount(o: Fields, key: string, ctx: string): number {
  return required(count(o, key, ctx), key, ctx);
}

function oneOf<const T extends string>(o: Fields, key: string, values: readonly T[], ctx: string): T {
  const v = required(text(o, key, ctx), key, ctx);
  if (!(values as readonly string[]).includes(v)) {
    throw new Malformed(`${ctx}: "${key}" must be one of ${values.map((x) => `"${x}"`).join(', ')}, got ${describe(v)}`);
  }
  return v as T;
}

/** A short rendering of a bad value for messages. */
function describe(v: unknown): string {
  if (v === undefined) return 'nothing';
  const s = JSON.stringify(v) ?? String(v);
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}
