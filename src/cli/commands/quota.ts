import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { SandtrailError } from '../../errors/index.js';
import { checkRedis, createRedis } from '../../queue/index.js';
import { ledgerClient, OperationReplay, parseInstant, QuotaLedger, type Period, type QuotaKind, type UsageRow } from '../../quota/index.js';
import { writeOut, type CliContext } from '../context.js';

/** `sandtrail quota replay FILE`: the policy applied to a file of operations. Exit 3 if any line was malformed. */
export async function quotaReplayCommand(file: string, opts: { json?: boolean }): Promise<number> {
  const info = await stat(file).catch((err: NodeJS.ErrnoException) => {
    throw new SandtrailError('USAGE', `cannot read ${file}: ${err.code === 'ENOENT' ? 'no such file' : err.message}`);
  });
  if (info.isDirectory())
    throw new SandtrailError('USAGE', `${file} is a directory: quota replay reads a file of operations, one JSON line each`);
  // read as it streams: the replay keeps the policy state and totals, never the file's lines
  const replay = new OperationReplay(new Date());
  let refused = 0;
  const report = (e: { line: number; message: string } | undefined): void => {
    if (!e) return;
    refused += 1;
    process.stderr.write(`${JSON.stringify(e)}\n`);
  };
  for await (const line of boundedLines(createReadStream(file), MAX_OPERATION_BYTES)) {
    report(line === null ? replay.refuse(`longer than ${MAX_OPERATION_BYTES} bytes: not an operation`) : replay.add(line));
  }
  const consumption = replay.consumption();
  if (opts.json) {
    await writeOut(`${JSON.stringify(consumption)}\n`);
  } else {
    for (const [scope, table] of [
      ['user', consumption.users],
      ['group', consumption.groups],
    ] as const) {
      for (const [id, kinds] of Object.entries(table)) {
        await writeOut(
          `${scope} ${id}: ${Object.entries(kinds)
            .map(([k, n]) => `${k}=${n}`)
            .join(' ')}\n`,
        );
      }
    }
  }
  return refused > 0 ? 3 : 0;
}

/** An operation is a few hundred bytes: a line past this is refused without being held whole. */
const MAX_OPERATION_BYTES = 1024 * 1024;

/** The lines of a byte stream as text; null for one longer than `maxBytes`, of which only the length is read. */
async function* boundedLines(input: AsyncIterable<Buffer>, maxBytes: number): AsyncGenerator<string | null> {
  let parts: Buffer[] = [];
  let size = 0;
  let tooLong = false;
  const take = (tail: Buffer): string | null => {
    const text = tooLong ? null : Buffer.concat([...parts, tail]).toString('utf8');
    parts = [];
    size = 0;
    tooLong = false;
    return text;
  };
  for await (const chunk of input) {
    let start = 0;
    for (let nl = chunk.indexOf(0x0a); nl !== -1; nl = chunk.indexOf(0x0a, start)) {
      const piece = chunk.subarray(start, nl);
      start = nl + 1;
      if (size + piece.length > maxBytes) tooLong = true;
      yield take(piece);
    }
    const rest = chunk.subarray(start);
    size += rest.length;
    if (size > maxBytes) {
      tooLong = true;
      parts = [];
    } else if (!tooLong && rest.length > 0) parts.push(Buffer.from(rest));
  }
  if (size > 0 || parts.length > 0 || tooLong) yield take(Buffer.alloc(0));
}

/** How long the ledger commands wait for Redis to answer before saying it cannot reach it. */
const LEDGER_REDIS_TIMEOUT_MS = 5000;

async function withLedger<T>(ctx: CliContext, fn: (l: QuotaLedger | undefined) => Promise<T>, required: boolean): Promise<T> {
  if (!ctx.config.redisUrl) {
    if (required) throw new SandtrailError('USAGE', 'the ledger lives in the shared Redis: set REDIS_URL (or --redis-url)');
    return fn(undefined);
  }
  // an unreachable Redis is said at once (a ledger read would wait for it forever)
  await checkRedis(ctx.config.redisUrl, {
    redisCluster: ctx.config.redisCluster,
    timeoutMs: LEDGER_REDIS_TIMEOUT_MS,
    prefix: ctx.config.queuePrefix,
    onWarning: (m) => ctx.log.warn(m),
  });
  const redis = createRedis(ctx.config.redisUrl, ctx.config);
  try {
    return await fn(new QuotaLedger(redis, ctx.config.queuePrefix));
  } finally {
    redis.disconnect();
  }
}

/** `sandtrail ledger`: units and call counts per quota kind and per operation, for one period bucket. */
export async function ledgerCommand(
  opts: { user?: string; group?: string; period?: string; at?: string; json?: boolean },
  ctx: CliContext,
): Promise<number> {
  const period = (opts.period ?? 'day') as Period;
  if (!['minute', 'day', 'month'].includes(period)) throw new SandtrailError('USAGE', '--period must be minute, day or month');
  // strict and UTC, as quota replay reads times: Date() took "1" for 2001 and a time without an offset as local
  const at = opts.at === undefined ? new Date() : parseInstant(opts.at);
  if (at === null)
    throw new SandtrailError('USAGE', `--at must be an ISO-8601 UTC time (YYYY-MM-DD[THH:MM[:SS]][Z|±HH:MM]), got "${opts.at}"`);
  return withLedger(
    ctx,
    async (ledger) => {
      const rows = await ledger!.usage({ period, at, user: opts.user, group: opts.group });
      await writeOut(
        opts.json ? `${JSON.stringify(rows)}\n` : rows.map(formatUsage).join('\n') || `no usage recorded for this ${period}\n`,
      );
      return 0;
    },
    true,
  );
}

function formatUsage(r: UsageRow): string {
  const kinds = Object.entries(r.units).map(([k, n]) => `${k}=${n}`);
  const lines = [`${r.scope} ${r.id} (${r.period} ${r.bucket}): ${kinds.length ? kinds.join(' ') : 'no units'}`];
  for (const [label, o] of Object.entries(r.operations).sort()) {
    const units = Object.entries(o.units).map(([k, n]) => `${k}=${n}`);
    const lost = o.unanswered ? `; ${o.unanswered} sent without an answer (not charged)` : '';
    lines.push(`  ${label}: ${o.calls} call(s), ${units.length ? units.join(' ') : '0 units'}${lost}`);
  }
  return `${lines.join('\n')}\n`;
}

/** Quota names of `overall_quotas` → the ledger's kind and period they compare with. */
const QUOTA_NAMES: Record<string, [QuotaKind, Period]> = {
  api_requests_daily: ['api_requests', 'day'],
  api_requests_monthly: ['api_requests', 'month'],
  intelligence_searches_monthly: ['searches', 'month'],
  intelligence_downloads_monthly: ['downloads', 'month'],
  intelligence_hunting_rules: ['livehunt', 'month'],
  intelligence_retrohunt_jobs_monthly: ['retrohunt', 'month'],
  intelligence_vtdiff_creation_monthly: ['diff_sessions', 'month'],
  private_scans_monthly: ['private_scanning_files', 'month'],
  private_urlscans_monthly: ['private_scanning_urls', 'month'],
  intelligence_graphs_private: ['private_graphs', 'month'],
  asm_entities_monthly: ['asm_entities', 'month'],
};

interface QuotaRow {
  quota: string;
  user: { allowed: number | null; used: number | null };
  group: { allowed: number | null; used: number | null; inherited_from: string | null };
  ledger: { user: number | null; group: number | null; kind: QuotaKind | null; period: Period | null };
}

/** `sandtrail quota check`: the service's allowed/used per quota beside the ledger's figures (0 units, rule 2). */
export async function quotaCheckCommand(opts: { user?: string; json?: boolean }, ctx: CliContext): Promise<number> {
  const { gti } = ctx.config;
  const user = opts.user ?? gti.user;
  if (!gti.apiKey) throw new SandtrailError('USAGE', 'set GTI_APIKEY to read quotas');
  if (!user) throw new SandtrailError('USAGE', 'give --user or set SANDTRAIL_GTI_USER (the GTI user id the key belongs to)');
  return withLedger(
    ctx,
    async (ledger) => {
      const client = ledgerClient(gti, { ledger, user });
      const doc = (await client.getJson(`/users/${encodeURIComponent(user)}/overall_quotas`)) as { data?: Record<string, unknown> };
      const rows: QuotaRow[] = [];
      const usage = new Map<string, UsageRow>();
      const ledgerUnits = async (
        scope: 'user' | 'group',
        id: string | undefined,
        kind: QuotaKind,
        period: Period,
      ): Promise<number | null> => {
        if (!ledger || !id) return null;
        const k = `${scope}:${id}:${period}`;
        if (!usage.has(k))
          usage.set(k, (await ledger.usage({ period, ...(scope === 'user' ? { user: id } : { group: id }) }))[0] as UsageRow);
        return usage.get(k)?.units[kind] ?? 0;
      };
      for (const [quota, value] of Object.entries(doc.data ?? {}).sort()) {
        const v = value as {
          user?: { allowed?: number; used?: number };
          group?: { allowed?: number; used?: number; inherited_from?: string };
        };
        const [kind, period] = QUOTA_NAMES[quota] ?? [null, null];
        rows.push({
          quota,
          user: { allowed: v.user?.allowed ?? null, used: v.user?.used ?? null },
          group: { allowed: v.group?.allowed ?? null, used: v.group?.used ?? null, inherited_from: v.group?.inherited_from ?? null },
          ledger: {
            kind,
            period,
            user: kind && period ? await ledgerUnits('user', user, kind, period) : null,
            group: kind && period ? await ledgerUnits('group', gti.group, kind, period) : null,
          },
        });
      }
      if (opts.json) {
        await writeOut(`${JSON.stringify({ user, group: gti.group ?? null, quotas: rows })}\n`);
      } else {
        const f = (n: number | null): string => (n === null ? '-' : String(n));
        await writeOut(`${'quota'.padEnd(38)} ${'user used/allowed'.padEnd(20)} ${'group used/allowed'.padEnd(20)} ledger user/group\n`);
        for (const r of rows) {
          await writeOut(
            `${r.quota.padEnd(38)} ${`${f(r.user.used)}/${f(r.user.allowed)}`.padEnd(20)} ${`${f(r.group.used)}/${f(r.group.allowed)}`.padEnd(20)} ${f(r.ledger.user)}/${f(r.ledger.group)}\n`,
          );
        }
        if (!ledger) process.stderr.write('no REDIS_URL: ledger figures unavailable\n');
      }
      return 0;
    },
    false,
  );
}
