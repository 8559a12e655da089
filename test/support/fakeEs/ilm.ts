/**
 * Index lifecycle management of the fake: `_ilm/policy` validated the way Elasticsearch 8.x
 * validates it (the timeseries phases, the actions each phase allows, `min_age` time values in
 * phase order, the hot-phase actions that need a rollover), the origination date an index takes
 * from its name (`index.lifecycle.parse_origination_date`), and a lifecycle run on demand that
 * applies the delete phase (the only phase whose effect a store can observe).
 */
import { indexSetting } from './mapping.js';
import { fail, isObj, type Obj } from './util.js';

const PHASES = ['hot', 'warm', 'cold', 'frozen', 'delete'] as const;
type Phase = (typeof PHASES)[number];

/** TimeseriesLifecycleType's allowed actions per phase. */
const ACTIONS: Record<Phase, readonly string[]> = {
  hot: ['set_priority', 'unfollow', 'rollover', 'readonly', 'downsample', 'shrink', 'forcemerge', 'searchable_snapshot'],
  warm: ['set_priority', 'unfollow', 'readonly', 'allocate', 'migrate', 'downsample', 'shrink', 'forcemerge'],
  cold: ['set_priority', 'unfollow', 'readonly', 'searchable_snapshot', 'allocate', 'migrate', 'downsample', 'freeze'],
  frozen: ['unfollow', 'searchable_snapshot'],
  delete: ['wait_for_snapshot', 'delete'],
};
const KNOWN_ACTIONS = new Set(Object.values(ACTIONS).flat());
const NEEDS_ROLLOVER = ['readonly', 'shrink', 'forcemerge', 'downsample', 'searchable_snapshot'];
/** The fields of the few actions whose bodies are checked (the others are taken as given). */
const ACTION_FIELDS: Record<string, readonly string[]> = {
  delete: ['delete_searchable_snapshot'],
  set_priority: ['priority'],
  readonly: [],
  unfollow: [],
};

const UNITS: Record<string, number> = { nanos: 1e-6, micros: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** A time value (`30d`, `0ms`, `-1`) in milliseconds, as TimeValue.parseTimeValue reads it. */
export function timeValueMs(v: unknown, setting: string): number {
  const s = typeof v === 'number' ? String(v) : typeof v === 'string' ? v.trim().toLowerCase() : '';
  if (s === '-1') return -1;
  if (s === '0') return 0;
  const m = /^(\d+(?:\.\d+)?)\s*(nanos|micros|ms|s|m|h|d)$/.exec(s);
  if (!m) {
    fail(
      400,
      'illegal_argument_exception',
      `failed to parse setting [${setting}] with value [${String(v)}] as a time value: unit is missing or unrecognized`,
    );
  }
  return Number(m[1]) * (UNITS[m[2] as string] as number);
}

function parsing(reason: string): never {
  fail(400, 'x_content_parse_exception', reason);
}

/** A stored policy: its validated body and the bookkeeping GET shows. */
export interface StoredPolicy {
  version: number;
  modified: string;
  policy: Obj;
}

/** Validates a PUT _ilm/policy body; returns the policy with every phase's `min_age` filled in. */
export function validatePolicy(name: string, body: unknown): Obj {
  if (name.startsWith('_') || /[\s,*?"<>|\\/]/.test(name) || name !== name.trim())
    fail(400, 'illegal_argument_exception', `invalid policy name [${name}]`);
  if (!isObj(body)) parsing('[1:1] request body is required');
  for (const k of Object.keys(body)) if (k !== 'policy') parsing(`[1:2] [put_lifecycle_request] unknown field [${k}]`);
  const policy = body.policy;
  if (!isObj(policy)) parsing('[1:2] Required [policy]');
  for (const k of Object.keys(policy))
    if (!['phases', '_meta', 'deprecated'].includes(k)) parsing(`[1:12] [lifecycle_policy] unknown field [${k}]`);
  if (!isObj(policy.phases)) parsing('[1:12] Required [phases]');
  if (policy._meta !== undefined && !isObj(policy._meta)) parsing('[1:12] [lifecycle_policy] failed to parse field [_meta]');
  const out: Obj = {};
  const ages = new Map<Phase, number>();
  for (const [phase, def] of Object.entries(policy.phases)) {
    if (!(PHASES as readonly string[]).includes(phase))
      fail(400, 'illegal_argument_exception', `Timeseries lifecycle does not support phase [${phase}]`);
    if (!isObj(def)) parsing(`[1:24] [phases] failed to parse field [${phase}]`);
    for (const k of Object.keys(def)) if (k !== 'min_age' && k !== 'actions') parsing(`[1:24] [phase] unknown field [${k}]`);
    const minAge = def.min_age ?? '0ms';
    ages.set(phase as Phase, timeValueMs(minAge, 'min_age'));
    const actions = isObj(def.actions)
      ? def.actions
      : def.actions === undefined
        ? {}
        : parsing('[1:24] [phase] failed to parse field [actions]');
    for (const [action, spec] of Object.entries(actions)) {
      if (!KNOWN_ACTIONS.has(action)) fail(400, 'x_content_parse_exception', `[1:40] unknown field [${action}] for LifecycleAction`);
      if (!ACTIONS[phase as Phase].includes(action))
        fail(400, 'illegal_argument_exception', `invalid action [${action}] defined in phase [${phase}]`);
      if (!isObj(spec)) parsing(`[1:40] [${action}] expected an object`);
      const fields = ACTION_FIELDS[action];
      if (fields) for (const k of Object.keys(spec)) if (!fields.includes(k)) parsing(`[1:40] [${action}] unknown field [${k}]`);
      if (action === 'set_priority' && spec.priority !== null && !(Number.isInteger(spec.priority) && Number(spec.priority) >= 0))
        fail(400, 'illegal_argument_exception', '[priority] must be 0 or greater');
    }
    out[phase] = { min_age: String(minAge), actions };
  }
  const hot = isObj(out.hot) ? (out.hot.actions as Obj) : undefined;
  const needs = hot && !('rollover' in hot) ? NEEDS_ROLLOVER.filter((a) => a in hot) : [];
  if (needs.length > 0)
    fail(400, 'illegal_argument_exception', `the [${needs.join(', ')}] action(s) may not be used in the [hot] phase without an accompanying [rollover] action`); // prettier-ignore
  // a later phase may not start before an earlier one (a min_age of 0 is "not configured")
  for (let i = 0; i < PHASES.length; i++) {
    const a = ages.get(PHASES[i] as Phase);
    if (!a) continue;
    for (const later of PHASES.slice(i + 1)) {
      const b = ages.get(later);
      if (b && b < a) {
        fail(
          400,
          'illegal_argument_exception',
          `Your policy is configured to run the ${later} phase (min_age: ${String((out[later] as Obj).min_age)}) before the ${PHASES[i]} phase (min_age: ${String((out[PHASES[i] as Phase] as Obj).min_age)}). You should change the phase timing so that the phases will execute in the order of hot, warm, then cold.`,
        );
      }
    }
  }
  return { ...(policy._meta !== undefined ? { _meta: policy._meta } : {}), phases: out };
}

const DATE_IN_NAME = /^.*-(\d{4}.\d{2}.\d{2})(-[\d]+)?$/;

/**
 * The origination date (ms) an index takes from its name when `index.lifecycle.parse_origination_date`
 * is true; an index whose name does not carry `-yyyy.MM.dd` (optionally `-digits` after it) is refused
 * at creation, as IndexLifecycleOriginationDateParser refuses it.
 */
export function originationFromName(name: string, settings: Obj): number | undefined {
  if (String(indexSetting(settings, 'lifecycle.parse_origination_date')) !== 'true') return undefined;
  if (indexSetting(settings, 'lifecycle.origination_date') !== undefined) return undefined;
  const m = DATE_IN_NAME.exec(name);
  if (!m) fail(400, 'illegal_argument_exception', `index name [${name}] does not match pattern '${DATE_IN_NAME.source}'`);
  const date = m[1] as string;
  const ymd = /^(\d{4})\.(\d{2})\.(\d{2})$/.exec(date);
  const ms = ymd ? Date.UTC(Number(ymd[1]), Number(ymd[2]) - 1, Number(ymd[3])) : NaN;
  const back = new Date(ms);
  if (!ymd || Number.isNaN(ms) || back.getUTCDate() !== Number(ymd[3]) || back.getUTCMonth() !== Number(ymd[2]) - 1) {
    fail(
      400,
      'illegal_argument_exception',
      `index name [${name}] contains date [${date}] which couldn't be parsed using the 'yyyy.MM.dd' format`,
    );
  }
  return ms;
}

/** When the delete phase of `policy` removes an index that originated at `origination` (ms); undefined: never. */
export function deleteAt(policy: Obj | undefined, origination: number): number | undefined {
  const phases = isObj(policy?.phases) ? policy.phases : {};
  const del = phases.delete;
  if (!isObj(del) || !isObj(del.actions) || !('delete' in del.actions)) return undefined;
  return origination + Math.max(0, timeValueMs(del.min_age ?? '0ms', 'min_age'));
}
