import type { Charge } from './Charge.js';
import { normalizeApiPath } from './normalizeApiPath.js';
import type { ApiOperation, OperationName, TimedOperation } from './Operation.js';
import { monthOf } from './periodBuckets.js';
import type { PolicyStateReader, StateChange } from './PolicyState.js';
import type { QuotaKind } from './QuotaKind.js';

/** A price and the state changes that come with it. */
export interface Priced {
  charge: Charge;
  stateChanges: StateChange[];
}

/** The operation variant(s) whose `op` can be K (distributive, so `private_scan_file` finds its interface). */
type OpOf<K extends OperationName, T = TimedOperation> = T extends { op: infer N } ? (K extends N ? T : never) : never;
type Pricer<K extends OperationName> = (op: OpOf<K>, state: PolicyStateReader) => Priced;

const SHA256_RE = /^[0-9a-fA-F]{64}$/;

/**
 * Prices one operation by the spec's §Limits rules against the state `state` reads. Pure: the
 * state is only read, and what must change is returned as `stateChanges`.
 */
export function priceOperation(op: TimedOperation, state: PolicyStateReader): Priced {
  const pricer = PRICERS[op.op] as Pricer<OperationName>;
  return pricer(op as OpOf<OperationName>, state);
}

function priced(kind: QuotaKind, units: number, rules: number[], reason: string, stateChanges: StateChange[] = []): Priced {
  return { charge: { units: { [kind]: units }, rules, reason }, stateChanges };
}

/** The price of every operation other than a plain API call, one row per op. */
const PRICERS: { [K in OperationName]: Pricer<K> } = {
  api: (op, state) => priceApiCall(op, state),
  // rule 4: a delta or backfill that returned no IoC is free, any other costs one unit whatever the IoC count
  ioc_delta: (op) => priceIoc(op.op, op.ioc_count),
  ioc_backfill: (op) => priceIoc(op.op, op.ioc_count),
  file_upload: (op, state) => {
    if (op.known) return priced('api_requests', 1, [1], 'rule 1: uploading a file the service already knows costs 1 API unit');
    // parseOperation requires analysis_id for unknown uploads; a hand-built op without one grants the file only
    const analysisId = op.analysis_id ?? null;
    const fresh = !state.hasFileGrant(op.user, op.sha256) || (analysisId !== null && !state.hasAnalysisGrant(op.user, analysisId));
    const changes: StateChange[] = fresh ? [{ kind: 'rule6_grant', user: op.user, sha256: op.sha256, analysisId }] : [];
    return priced('api_requests', 0, [6], 'rule 6: uploading a file not yet known costs no API quota', changes);
  },
  asm_api: () => priced('api_requests', 0, [7], 'rule 7: ASM API endpoints cost no API quota'),
  asm_entity_discovered: (op) =>
    priced('asm_entities', op.count, [14], `rule 14: ${op.count} ASM entit${op.count === 1 ? 'y' : 'ies'} discovered, 1 unit each`),
  ui_search: (op) => priced('searches', 1, [9], `rule 9: UI search (${op.kind}) costs 1 search`),
  ui_download: () => priced('downloads', 1, [9], 'rule 9: UI file download costs 1 download'),
  livehunt_ruleset: (op, state) => {
    if (!op.active) return priced('livehunt', 0, [10], `rule 10: inactive ruleset ${op.ruleset_id} costs nothing`);
    // Choice (rule 10 is silent on re-reporting): Livehunt is a monthly quota of active rules, so a
    // ruleset seen again in the same UTC month is charged only for rules beyond the most already
    // charged for it that month; re-activating or re-reporting it never double-charges, shrinking
    // it refunds nothing, and the next month charges it afresh. Keyed by user + ruleset.
    const month = monthOf(op.at);
    const mark = state.livehuntMark(op.user, op.ruleset_id, month);
    const units = Math.max(0, op.rules - mark);
    const changes: StateChange[] =
      op.rules > mark ? [{ kind: 'livehunt_mark', user: op.user, ruleset: op.ruleset_id, month, rules: op.rules }] : [];
    const already = mark > 0 ? `, ${mark} already charged in ${month}` : '';
    return priced('livehunt', units, [10], `rule 10: ruleset ${op.ruleset_id} has ${op.rules} active rule(s)${already}`, changes);
  },
  retrohunt_job: () => priced('retrohunt', 1, [11], 'rule 11: a Retrohunt job costs 1 unit whatever its outcome'),
  diff_session: () => priced('diff_sessions', 1, [12], 'rule 12: a diff session costs 1 unit'),
  private_scan_file: () => priced('private_scanning_files', 1, [13], 'rule 13: a file submitted to Private Scanning costs 1 unit'),
  private_scan_url: () => priced('private_scanning_urls', 1, [13], 'rule 13: a URL submitted to Private Scanning costs 1 unit'),
  graph_create: (op) =>
    op.visibility === 'private'
      ? priced('private_graphs', 1, [15], 'rule 15: a private graph costs 1 private graph and nothing else')
      : priced('api_requests', op.items, [15], `rule 15: a public graph costs the ${op.items} API request(s) loading its items takes`),
};

function priceIoc(name: string, iocs: number): Priced {
  return iocs === 0
    ? priced('api_requests', 0, [4], `rule 4: ${name} returned no IoC and costs no API quota`)
    : priced('api_requests', 1, [4], `rule 4: ${name} returned ${iocs} IoC(s) and costs 1 API unit`);
}

/** An API call as the path rules see it. */
interface ApiCall {
  user: string;
  method: string;
  segments: string[];
  invalidId: boolean;
}

/** One exception to rule 1; the first row that applies prices the call. */
interface ApiRule {
  rules: number[];
  units: number;
  applies: (call: ApiCall, state: PolicyStateReader) => boolean;
  reason: string;
}

/**
 * Rule 1 and its exceptions for API calls, in order. Fixed path segments match case-sensitively
 * (the API's routes are lower-case) so an odd spelling is charged rather than waived: a ledger
 * should err towards counting.
 */
const API_RULES: readonly ApiRule[] = [
  {
    rules: [2],
    units: 0,
    applies: ({ segments: s }) => s.length === 3 && s[0] === 'users' && (s[2] === 'overall_quotas' || s[2] === 'api_usage'),
    reason: 'rule 2: quota and usage reads cost no API quota',
  },
  {
    // "/feeds" and everything under it: the feed endpoints and the artefact links they hand out
    rules: [3],
    units: 0,
    applies: ({ segments: s }) => s[0] === 'feeds',
    reason: 'rule 3: IoC feed endpoints (and downloads through their links) cost no API quota',
  },
  {
    rules: [7],
    units: 0,
    applies: ({ segments: s }) => s[0] === 'asm',
    reason: 'rule 7: ASM API endpoints cost no API quota',
  },
  {
    // invalid_id on any other call is ignored: rule 5 waives only GET /analyses/{id}
    rules: [5],
    units: 0,
    applies: ({ method, segments: s, invalidId }) => invalidId && method === 'GET' && s.length === 2 && s[0] === 'analyses',
    reason: 'rule 5: GET /analyses/{id} with an invalid id costs no API quota',
  },
  {
    // only the sha256 form: an md5 or sha1 of the same file cannot be tied to the upload here
    rules: [6],
    units: 0,
    applies: ({ user, method, segments: s }, state) =>
      method === 'GET' &&
      s.length === 2 &&
      s[0] === 'files' &&
      SHA256_RE.test(s[1] ?? '') &&
      state.hasFileGrant(user, (s[1] ?? '').toLowerCase()),
    reason: 'rule 6: GET /files/{sha256} of a file this user uploaded while unknown costs no API quota',
  },
  {
    rules: [6],
    units: 0,
    applies: ({ user, method, segments: s }, state) =>
      method === 'GET' && s.length === 3 && s[0] === 'files' && s[1] === 'analyses' && state.hasAnalysisGrant(user, s[2] ?? ''),
    reason: 'rule 6: GET /files/analyses/{id} of an upload of a then-unknown file costs no API quota for its uploader',
  },
  {
    rules: [1, 6],
    units: 1,
    applies: ({ method, segments: s }) => method === 'POST' && s.length === 3 && s[0] === 'files' && s[2] === 'analyse',
    reason: 'rule 6: a re-scan (POST /files/{sha256}/analyse) costs 1 API unit as any call (rule 1)',
  },
];

function priceApiCall(op: ApiOperation, state: PolicyStateReader): Priced {
  // parseOperation has already refused paths that do not normalize; a hand-built one is charged as any call
  const call: ApiCall = {
    user: op.user,
    method: op.method.toUpperCase(),
    segments: normalizeApiPath(op.path) ?? [],
    invalidId: op.invalid_id === true,
  };
  const rule = API_RULES.find((r) => r.applies(call, state));
  if (rule) return priced('api_requests', rule.units, rule.rules, rule.reason);
  return priced('api_requests', 1, [1], `rule 1: ${call.method} /${call.segments.join('/')} costs 1 API unit`);
}
