import { SandtrailError } from '../../errors/index.js';
import { canonicalBehaviourId } from '../../normalize/index.js';
import {
  HUNT_LIMITS,
  pivotKindOf,
  type BehaviourLine,
  type FileRollup,
  type PivotKind,
  type PivotStats,
  type PivotSummary,
  type RelatedBehaviours,
} from '../../store/index.js';
import { withStore, writeOut, type CliContext } from '../context.js';
import { PIVOT_FLAGS } from './query.js';
import { countFlag } from '../countFlag.js';
import { parseSince } from '../sinceFlag.js';

/** `--since` (sinceFlag) as epoch seconds. */
function sinceSeconds(raw: string | undefined): number | undefined {
  return raw === undefined ? undefined : Math.floor(parseSince(raw) / 1000);
}

const day = (t: number | null): string => (t === null ? '-' : new Date(t * 1000).toISOString().slice(0, 16).replace('T', ' '));
const counts = (l: { name: string; count: number }[]): string => l.map((x) => `${x.name} ${x.count}`).join(', ') || '-';
const line = (b: BehaviourLine): string => `  ${day(b.analysis_date)}  ${b.id}  ${b.verdicts.join(' ') || '-'}`;

function summaryLines(s: PivotSummary): string[] {
  return [
    `${s.kind} ${s.value}: ${s.behaviours} behaviour(s) of ${s.files} file(s), first seen ${day(s.firstSeen)}, last seen ${day(s.lastSeen)}`,
    `  sandboxes: ${counts(s.sandboxes)}`,
    `  verdicts: ${counts(s.verdicts)}`,
  ];
}

/** `sandtrail pivot`: statistics of one pivot value and its newest behaviours. */
export async function pivotCommand(opts: Record<string, unknown>, ctx: CliContext): Promise<number> {
  const given = PIVOT_FLAGS.filter(([, key, kind]) => kind !== null && typeof opts[key] === 'string');
  if (given.length !== 1) {
    throw new SandtrailError(
      'USAGE',
      `give exactly one of ${PIVOT_FLAGS.filter(([, , k]) => k)
        .map(([f]) => f.split(' ')[0])
        .join(', ')}`,
    );
  }
  const [flag, key, kind] = given[0] as (typeof PIVOT_FLAGS)[number];
  // an empty value (an unset shell variable) matches nothing: a mistake in the command, as in query
  if ((opts[key] as string).trim() === '') throw new SandtrailError('USAGE', `${flag.split(' ')[0]} needs a value, got an empty one`);
  const limit = countFlag('--limit', opts.limit as string | undefined, 20, { min: 0, max: 1000 });
  const offset = countFlag('--offset', opts.offset as string | undefined, 0, { min: 0, max: 1_000_000_000 });
  // past the window a store cannot read the page: refused, not answered with another page
  if (offset + limit > HUNT_LIMITS.window) {
    throw new SandtrailError(
      'USAGE',
      `--offset + --limit must stay within ${HUNT_LIMITS.window} (the window both stores can page through); use query for every id`,
    );
  }
  const stats: PivotStats = await withStore(ctx, (s) => s.hunt.pivotStats(kind as PivotKind, opts[key] as string, { limit, offset }));
  if (opts.json) await writeOut(`${JSON.stringify(stats)}\n`);
  else {
    // --limit 0 asks for the figures alone: no list, nothing said of one
    const shown =
      limit === 0
        ? []
        : stats.newest.length
          ? [`newest (${offset + 1}-${offset + stats.newest.length} of ${stats.behaviours}):`]
          : [stats.behaviours > 0 ? `no behaviours past --offset ${offset} (${stats.behaviours} in all)` : 'no behaviours'];
    const more = limit > 0 && offset + stats.newest.length < stats.behaviours ? [`  (more: --offset ${offset + stats.newest.length})`] : [];
    await writeOut([...summaryLines(stats), ...shown, ...stats.newest.map(line), ...more].join('\n') + '\n');
  }
  return 0;
}

/** `sandtrail top KIND`: the most frequent values of one pivot kind, with their figures. */
export async function topCommand(
  kindName: string,
  opts: { since?: string; limit?: string; json?: boolean },
  ctx: CliContext,
): Promise<number> {
  // the flag spelling (sigma-rule) or the stored name (sigma_rule_id)
  const kind = pivotKindOf(kindName);
  if (!kind || kind === 'sha256')
    throw new SandtrailError('USAGE', `KIND must be one of behash, sigma-rule, ja3, ja3s, dropped-sha256; got "${kindName}"`);
  const since = sinceSeconds(opts.since);
  // a top of nothing answers nothing: at least one value
  const limit = countFlag('--limit', opts.limit, 10, { min: 1, max: HUNT_LIMITS.top.max });
  const top = await withStore(ctx, (s) => s.hunt.top(kind, { since, limit }));
  if (opts.json) await writeOut(`${JSON.stringify(top)}\n`);
  else
    await writeOut(
      top.length
        ? `${top.flatMap((t, i) => summaryLines(t).map((l, j) => (j === 0 ? `${i + 1}. ${l}` : `   ${l}`))).join('\n')}\n`
        : `no ${kind} values${since ? ' since then' : ''}\n`,
    );
  return 0;
}

/** `sandtrail related ID`: who shares this behaviour's pivot values. */
export async function relatedCommand(id: string, opts: { limit?: string; json?: boolean }, ctx: CliContext): Promise<number> {
  const limit = countFlag('--limit', opts.limit, 20, { min: 1, max: 1000 });
  const r: RelatedBehaviours | null = await withStore(ctx, (s) => s.hunt.related(canonicalBehaviourId(id), { limit }));
  if (!r) throw new SandtrailError('NOT_FOUND', `no behaviour with id "${id}" in the store`);
  if (opts.json) await writeOut(`${JSON.stringify(r)}\n`);
  else
    await writeOut(
      [
        `${r.id}: ${r.values.length} pivot value(s)`,
        ...r.values.map((v) => `  ${v.kind} ${v.value}: shared by ${v.others} other behaviour(s)`),
        r.related.length ? 'related, most values shared first:' : 'no other behaviour shares any of them',
        ...r.related.map((b) => `${line(b)}  shares ${b.shared.map((s) => `${s.kind}=${s.value}`).join(', ')}`),
      ].join('\n') + '\n',
    );
  return 0;
}

/** `sandtrail file HASH`: every sandbox's report of one file, merged. */
export async function fileCommand(hash: string, opts: { json?: boolean }, ctx: CliContext): Promise<number> {
  if (!/^[0-9a-fA-F]+$/.test(hash) || ![32, 40, 64].includes(hash.length))
    throw new SandtrailError('USAGE', `give a file's SHA-256, MD5 or SHA-1, got "${hash}"`);
  const f: FileRollup | null = await withStore(ctx, (s) => s.hunt.fileRollup(hash));
  if (!f) throw new SandtrailError('NOT_FOUND', `no report of file ${hash} in the store`);
  if (opts.json) {
    await writeOut(`${JSON.stringify(f)}\n`);
    return 0;
  }
  const seen = (title: string, list: { value: string; sandboxes: string[]; title?: string | null; level?: string | null }[]): string[] =>
    list.length
      ? [
          `${title}:`,
          ...list.map((v) => `  ${v.value}${v.title ? ` ${v.title}` : ''}${v.level ? ` [${v.level}]` : ''}  (${v.sandboxes.join(', ')})`),
        ]
      : [];
  await writeOut(
    [
      `file ${f.sha256}${f.md5 ? `  md5 ${f.md5}` : ''}${f.sha1 ? `  sha1 ${f.sha1}` : ''}: ${f.reports.length} report(s)`,
      ...f.reports.map(
        (r) => `  ${r.sandbox_name}: ${r.verdicts.join(' ') || '-'}  behash ${r.behash ?? '-'}  analysed ${day(r.analysis_date)}`,
      ),
      ...seen('sigma rules', f.sigma),
      ...seen('JA3', f.ja3),
      ...seen('JA3S', f.ja3s),
      ...seen('dropped files', f.dropped_sha256),
      ...seen('MITRE techniques', f.mitre_techniques),
      ...seen('hosts', f.hosts),
      ...seen('IPs', f.ips),
    ].join('\n') + '\n',
  );
  return 0;
}
