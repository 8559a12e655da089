import { randomUUID } from 'node:crypto';
import { fetchArtefact, HAS_FLAG, parseArtefactFilter } from '../../artefacts/index.js';
import { messageOf, SandtrailError } from '../../errors/index.js';
import { fetchBehaviour, RunBudget } from '../../lookup/index.js';
import { createRedis } from '../../queue/index.js';
import { artefactChoiceOf } from '../artefactChoice.js';
import type { ArtefactFlags } from '../artefactFlags.js';
import { estimateLine, guardBudget, maxApiUnitsOf, type BudgetFlags } from '../budget.js';
import { writeOut, type CliContext } from '../context.js';
import { openStoreAndRedis } from '../storeAndRedis.js';

export interface FetchArgs extends BudgetFlags, ArtefactFlags {
  relationships?: boolean;
  json?: boolean;
}

/**
 * `sandtrail fetch ID`: one behaviour report from the API (`GET /file_behaviours/{id}`), with its
 * `file` and `attack_techniques` relationships when asked, indexed; its artefacts (through the
 * artefact endpoints) when asked. 1 API unit per request.
 */
export async function fetchCommand(id: string, o: FetchArgs, ctx: CliContext): Promise<number> {
  const { config, log } = ctx;
  if (!/^[0-9a-fA-F]{64}_.+/.test(id)) throw new SandtrailError('USAGE', `a behaviour id is <sha256>_<sandbox name>, got "${id}"`);
  const choice = artefactChoiceOf(o);
  const lines = [estimateLine('GET /file_behaviours/{id}', 1, 'GET', '/file_behaviours/x')];
  if (o.relationships)
    lines.push(
      estimateLine(
        'GET /file_behaviours/{id}/{file|attack_techniques} (one more per further page)',
        2,
        'GET',
        '/file_behaviours/x/file',
        true,
      ),
    );
  if (choice)
    lines.push(
      estimateLine(
        `GET /file_behaviours/{id}/{${choice.kinds.join('|')}} (at most)`,
        choice.kinds.length,
        'GET',
        '/file_behaviours/x/pcap',
      ),
    );
  const guard = await guardBudget(o, lines, ctx);
  if (!guard) return 0;
  if (!config.gti.apiKey) throw new SandtrailError('USAGE', 'fetch needs GTI_APIKEY');
  // the store before Redis: a wrong --store ends the command here, before a private Redis is started
  const { store, redis } = await openStoreAndRedis(ctx, { spendsApiUnits: true });
  const connection = createRedis(redis.url, config);
  const run = randomUUID();
  const maxApiUnits = maxApiUnitsOf(o);
  try {
    const r = await fetchBehaviour({ config, redis: connection, store, id, relationships: o.relationships, run, maxApiUnits });
    const artefacts: { kind: string; size?: number; path?: string; error?: string; skipped?: boolean }[] = [];
    if (
      choice &&
      r.doc &&
      parseArtefactFilter(choice.filter)({ sandbox_name: r.doc.sandbox_name, attributes: r.doc.attributes as never })
    ) {
      const attrs = r.doc.attributes as unknown as Record<string, unknown>;
      for (const kind of choice.kinds as (keyof typeof HAS_FLAG)[]) {
        if (attrs[HAS_FLAG[kind]] !== true) continue;
        try {
          const data = {
            behaviourId: r.doc.id,
            sha256: r.doc.sha256,
            sandbox: r.doc.sandbox_name,
            kind,
            source: 'endpoint' as const,
            lastModified: r.doc.last_modification_date,
            run,
            maxApiUnits,
            maxBytes: choice.maxBytes,
          };
          // retried in place like the queued downloads: a cut body, a reset, a 429 or a 5xx is asked again
          const a = await fetchArtefact({
            config,
            store,
            redis: connection,
            data,
            onRetry: (i) => log.warn({ kind, attempt: i.attempt, code: i.code }, `artefact download retried: ${i.message}`),
          });
          artefacts.push({ kind, size: a.size, path: a.path, skipped: a.skipped });
        } catch (err) {
          artefacts.push({ kind, error: messageOf(err) });
        }
      }
    }
    const spent = await new RunBudget(connection, RunBudget.keyOf(config.queuePrefix, run), Number.POSITIVE_INFINITY).spent();
    const out = { id: r.id, status: r.status, relationships: r.relationships, artefacts, api_units: spent, reason: r.reason };
    if (o.json) await writeOut(`${JSON.stringify(out)}\n`);
    else {
      const rel = Object.entries(r.relationships)
        .map(([k, n]) => `${k} ${n}`)
        .join(', ');
      await writeOut(
        [
          `${r.status} ${r.id}${r.reason ? `: ${r.reason}` : ''}`,
          ...(rel ? [`  relationships: ${rel}`] : []),
          ...artefacts.map(
            (a) =>
              `  artefact ${a.kind}: ${a.error ? `failed: ${a.error}` : `${a.size} bytes ${a.path}${a.skipped ? ' (already there)' : ''}`}`,
          ),
          `  API units spent: ${spent}`,
        ].join('\n') + '\n',
      );
    }
    return r.status === 'rejected' || artefacts.some((a) => a.error) ? 1 : 0;
  } finally {
    connection.disconnect();
    await store.close();
    await redis.stop();
  }
}
