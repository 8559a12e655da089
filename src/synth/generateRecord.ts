import { detections } from './detections.js';
import { hostActivity, type Attrs } from './hostActivity.js';
import { networkActivity } from './networkActivity.js';
import { createPivotPools, type PivotPools } from './PivotPools.js';
import { processActivity } from './processActivity.js';
import type { RecordContext } from './RecordContext.js';
import type { Rng } from './Rng.js';
import { resolveVariantRates, type VariantRates, type VariantTally } from './VariantRates.js';
import { vocab } from './vocab.js';
import { stem, urlOn } from './values.js';

/** Where `links.self` and relationship links point. */
export const API_BASE = 'https://www.virustotal.com/api/v3';
/** Where the feed's per-batch artefact links (`context_attributes`) point. */
export const FEED_LINK_BASE = `${API_BASE}/feeds/file_behaviours`;

/** One line of the file_behaviour feed, as the upstream service writes it. */
export interface FeedRecord {
  type: 'file_behaviour';
  id: string;
  links: { self: string };
  attributes: Record<string, unknown>;
  context_attributes: Record<string, unknown>;
  relationships?: Record<string, unknown>;
}

/** Who a record is about; passing one re-analyses (updates) an earlier report. */
export interface RecordIdentity {
  /** 64 lower-case hex. */
  sha256: string;
  /** The id's part after the underscore: the sandbox name, plus `-<epoch>` for private analyses. */
  sandboxId: string;
  /** `attributes.sandbox_name` (without the private suffix). */
  sandboxName: string;
  /** Epoch seconds. */
  analysisDate: number;
}

/** Options of {@link generateRecord}. */
export interface GenerateRecordOptions {
  /** Shared pivot pools; default: the pools of seed 0 (pass the feed's own to match a writeFeed run). */
  pools?: PivotPools;
  /** `last_modification_date`, epoch seconds (the feed minute the record is published in); default 2026-11-01T00:00:xxZ. */
  lastModificationDate?: number;
  /** Share of big (100 KB and more) records; default 0.02. Ignored when `big` is set. */
  bigRate?: number;
  /** Force a big (true) or ordinary (false) record. */
  big?: boolean;
  /** Variant rates; missing ones take {@link DEFAULT_VARIANT_RATES}. */
  variants?: Partial<VariantRates>;
  /** Reuse this identity (an update); any part left out is drawn. */
  identity?: Partial<RecordIdentity>;
  /** Incremented once per variant the record shows. */
  tally?: VariantTally;
}

/** 2026-11-01T00:00:00Z, the start of the bundled sample feed. */
const DEFAULT_LMD = 1_793_491_200;
let defaultPools: PivotPools | undefined;

// Weighted toward the sandboxes that dominate the real feed.
const SANDBOX_WEIGHTS = [18, 14, 12, 8, 6, 5, 4, 3, 3, 2];
const SANDBOX_TOTAL = SANDBOX_WEIGHTS.reduce((a, b) => a + b, 0);
const STRING_LISTS = [
  'tags',
  'verdicts',
  'files_opened',
  'files_written',
  'files_deleted',
  'modules_loaded',
  'registry_keys_opened',
  'mutexes_created',
  'mutexes_opened',
  'calls_highlighted',
  'processes_created',
  'command_executions',
];
const ODD_ITEMS: readonly unknown[] = [42, null, true, 3.5, { value: 'x' }, ['nested'], 0];

/** Canonical form of a behaviour id: lower-case sha part, rest untouched. */
export function canonicalId(id: string): string {
  return id.slice(0, 64).toLowerCase() + id.slice(64);
}

/** The identity a record was generated with (sha lower-cased). */
export function identityOf(record: FeedRecord): RecordIdentity {
  const a = record.attributes;
  return {
    sha256: record.id.slice(0, 64).toLowerCase(),
    sandboxId: record.id.slice(65),
    sandboxName: String(a.sandbox_name),
    analysisDate: Number(a.analysis_date),
  };
}

/**
 * One realistic feed line object. Ordinary records are a few KB; a `bigRate` share are Zenbox-like
 * reports of a few hundred KB. Every variant of the spec appears at the rates in `opts.variants`.
 */
export function generateRecord(rng: Rng, opts: GenerateRecordOptions): FeedRecord {
  const rates = resolveVariantRates(opts.variants);
  const big = opts.big ?? rng.chance(opts.bigRate ?? 0.02);
  const pools = opts.pools ?? (defaultPools ??= createPivotPools(0));
  const lmd = opts.lastModificationDate ?? DEFAULT_LMD + rng.int(60);
  const given = opts.identity ?? {};
  const analysisDate = given.analysisDate ?? lmd - rng.int(7200);
  let sandboxName = given.sandboxName;
  let sandboxId = given.sandboxId;
  if (sandboxName === undefined || sandboxId === undefined) {
    if (rng.chance(rates.privateSandbox)) {
      sandboxName = rng.pick(vocab.privateSandboxes);
      sandboxId = `${sandboxName}-${analysisDate}`;
    } else {
      sandboxName = big && rng.chance(0.7) ? 'Zenbox' : weightedSandbox(rng);
      sandboxId = sandboxName;
    }
  }
  const sha = given.sha256 ?? rng.hex(64);

  const fileType = rng.pick(vocab.fileTypeTags);
  const sampleName = `${stem(rng)}.${fileType === 'peexe' ? 'exe' : fileType === 'pedll' ? 'dll' : fileType}`;
  const user = rng.pick(vocab.users);
  const ctx: RecordContext = {
    rng,
    rates,
    pools,
    // Calibrated so big records land between ~120 KB and ~550 KB of JSON.
    scale: big ? rng.range(12, 44) : 1,
    user,
    sampleName,
    samplePath: `C:\\Users\\${user}\\${rng.pick(['Desktop', 'AppData\\Local\\Temp', 'Downloads'])}\\${sampleName}`,
    hosts: [],
    ips: [],
    marks: new Set(),
  };
  if (big) ctx.marks.add('big');

  const attrs: Attrs = { analysis_date: analysisDate, sandbox_name: sandboxName };
  if (rng.chance(0.95)) attrs.behash = rng.chance(0.9) ? rng.pickSkewed(pools.behash) : rng.hex(32);
  const hasHtml = rng.chance(0.9);
  const hasPcap = rng.chance(0.6);
  const hasEvtx = rng.chance(0.4);
  const hasMemdump = rng.chance(0.2);
  attrs.has_html_report = hasHtml;
  attrs.has_pcap = hasPcap;
  attrs.has_evtx = hasEvtx;
  attrs.has_memdump = hasMemdump;
  processActivity(ctx, attrs);
  hostActivity(ctx, attrs);
  networkActivity(ctx, attrs);
  detections(ctx, attrs);
  if (fileType === 'apk') androidActivity(ctx, attrs);
  attrs.last_modification_date = lmd;

  if (rng.chance(rates.unknownAttributes)) {
    ctx.marks.add('unknown_attributes');
    attrs.memory_pattern_urls = ctx.hosts.length > 0 ? ctx.hosts.map((h) => urlOn(rng, h)) : [urlOn(rng, 'example.com')];
    if (rng.chance(0.5)) attrs.sandbox_version = `${rng.range(1, 9)}.${rng.range(0, 20)}.${rng.range(0, 99)}`;
  }
  let oddKey: string | undefined;
  if (rng.chance(rates.nonStringItems)) {
    oddKey = presentStringList(rng, attrs) ?? 'tags';
    const list = Array.isArray(attrs[oddKey]) ? (attrs[oddKey] as unknown[]) : [];
    for (let i = rng.range(1, 3); i > 0; i--) list.splice(rng.int(list.length + 1), 0, rng.pick(ODD_ITEMS));
    attrs[oddKey] = list;
    ctx.marks.add('non_string_items');
  }
  if (rng.chance(rates.scalarForList)) {
    // A different list than the one holding odd items, so each variant stays visible on its own.
    const key = presentStringList(rng, attrs, oddKey);
    if (key === undefined) attrs.processes_killed = 'MsMpEng.exe';
    else attrs[key] = (attrs[key] as unknown[]).find((v) => typeof v === 'string');
    ctx.marks.add('scalar_for_list');
  }

  const idSha = rng.chance(rates.upperCaseHash) ? (ctx.marks.add('upper_case_id'), sha.toUpperCase()) : sha;
  const id = `${idSha}_${sandboxId}`;
  if (sandboxId !== sandboxName) ctx.marks.add('private_sandbox');
  if (sandboxId.includes(' ')) ctx.marks.add('sandbox_with_space');

  const record: FeedRecord = {
    type: 'file_behaviour',
    id,
    links: { self: `${API_BASE}/file_behaviours/${encodeURIComponent(id)}` },
    attributes: attrs,
    context_attributes: contextAttributes(ctx, sha, fileType, id, lmd, { hasHtml, hasPcap, hasEvtx, hasMemdump }),
  };
  if (rng.chance(rates.relationships)) {
    ctx.marks.add('relationships');
    const mitre = (attrs.mitre_attack_techniques as Array<{ id: string }> | undefined) ?? [];
    const self = `${API_BASE}/file_behaviours/${encodeURIComponent(id)}`;
    record.relationships = {
      file: { data: { type: 'file', id: sha }, links: { self: `${self}/relationships/file`, related: `${self}/file` } },
      attack_techniques: {
        data: mitre.map((m) => ({ type: 'attack_technique', id: m.id })),
        links: { self: `${self}/relationships/attack_techniques`, related: `${self}/attack_techniques` },
      },
    };
  }
  if (opts.tally) for (const m of ctx.marks) opts.tally[m] += 1;
  return record;
}

function weightedSandbox(rng: Rng): string {
  let x = rng.int(SANDBOX_TOTAL);
  for (let i = 0; i < SANDBOX_WEIGHTS.length; i++) {
    x -= SANDBOX_WEIGHTS[i]!;
    if (x < 0) return vocab.sandboxes[i]!;
  }
  return vocab.sandboxes[0];
}

function presentStringList(rng: Rng, attrs: Attrs, except?: string): string | undefined {
  const present = STRING_LISTS.filter((k) => k !== except && Array.isArray(attrs[k]) && (attrs[k] as unknown[]).length > 0);
  return present.length > 0 ? rng.pick(present) : undefined;
}

function contextAttributes(
  ctx: RecordContext,
  sha: string,
  fileType: string,
  id: string,
  lmd: number,
  has: { hasHtml: boolean; hasPcap: boolean; hasEvtx: boolean; hasMemdump: boolean },
): Record<string, unknown> {
  const { rng } = ctx;
  // Feed artefact links carry an opaque per-batch token; they are only valid while the batch is in the feed.
  const token = Buffer.from(`${id}|${lmd}`).toString('base64url');
  const link = (kind: string): string => `${FEED_LINK_BASE}/${token}/${kind}`;
  const out: Record<string, unknown> = { file_md5: rng.hex(32), file_sha1: rng.hex(40), file_type_tag: fileType };
  if (has.hasHtml) out.html_report = link('html');
  if (has.hasPcap) out.pcap = link('pcap');
  if (has.hasEvtx) out.evtx = link('evtx');
  if (has.hasMemdump) out.memdump = link('memdump');
  if (rng.chance(ctx.rates.contextExtras)) {
    ctx.marks.add('context_extras');
    out.file_size = rng.range(2_000, 20_000_000);
    out.submission_country = rng.pick(['US', 'DE', 'ES', 'RU', 'CN', 'BR', 'IN']);
    if (rng.chance(0.5)) out.file_sha256 = sha;
  }
  return out;
}

function androidActivity(ctx: RecordContext, out: Attrs): void {
  const { rng } = ctx;
  const pkg = `com.${stem(rng).toLowerCase()}.app`;
  out.activities_started = [`${pkg}.MainActivity`, `${pkg}.ui.SettingsActivity`].slice(0, rng.range(1, 2));
  out.permissions_requested = ['android.permission.READ_SMS', 'android.permission.INTERNET', 'android.permission.READ_CONTACTS'].slice(
    0,
    rng.range(1, 3),
  );
  out.shared_preferences_sets = [{ key: 'device_id', value: rng.hex(16) }];
  out.system_property_lookups = ['ro.build.version.sdk', 'ro.product.model'];
  out.databases_opened = [`/data/data/${pkg}/databases/config.db`];
}
