import { randomUUID } from 'node:crypto';
import {
  classifyHash,
  collectHashes,
  duplicatesNote,
  lookupPrivateFiles,
  privateLookupRefusal,
  type PrivateLookupSummary,
} from '../../lookup/index.js';
import { createRedis } from '../../queue/index.js';
import { SandtrailError } from '../../errors/index.js';
import { estimateLine, guardBudget, type BudgetFlags } from '../budget.js';
import { writeOut, type CliContext } from '../context.js';
import { openStoreAndRedis } from '../storeAndRedis.js';

/**
 * `sandtrail private lookup SHA256...`: private file reports (Private Scanning licence), stored
 * apart from the public behaviour data. Anything but a SHA-256 is refused before any request.
 */
export async function privateLookupCommand(
  args: string[],
  o: BudgetFlags & { file?: string[]; json?: boolean },
  ctx: CliContext,
): Promise<number> {
  // as for lookup: an argument that is no hash at all is a mistake in the command, nothing is asked
  // (an MD5 or SHA-1 is reported `invalid` for this endpoint; lines of a --file list one by one)
  const wrong = args.filter((a) => !('hash' in classifyHash(a)));
  if (wrong.length > 0) {
    throw new SandtrailError(
      'USAGE',
      `not an MD5, SHA-1 or SHA-256 (32, 40 or 64 hex characters): ${wrong.map((a) => JSON.stringify(a)).join(', ')}`,
    );
  }
  const given = (await collectHashes(args, o.file ?? [], (n) => process.stderr.write(duplicatesNote(n)))).map((h) => h.given);
  if (given.length === 0) throw new SandtrailError('USAGE', 'give SHA-256 hashes as arguments or --file LIST');
  for (const g of given) {
    const refused = privateLookupRefusal(g);
    if (refused) process.stderr.write(`sandtrail: refused "${g}": ${refused}\n`);
  }
  const asked = given.filter((g) => !privateLookupRefusal(g)).length;
  const guard = await guardBudget(o, [estimateLine('GET /private/files/{sha256}', asked, 'GET', '/private/files/x')], ctx);
  if (!guard) return 0;
  const { config } = ctx;
  if (asked > 0 && !config.gti.apiKey) throw new SandtrailError('USAGE', 'private lookup needs GTI_APIKEY');
  // the store before Redis: a wrong --store ends the command here, before a private Redis is started
  const { store, redis } = await openStoreAndRedis(ctx, { spendsApiUnits: true });
  const connection = createRedis(redis.url, config);
  try {
    const maxApiUnits = o.maxApiUnits === undefined ? undefined : Number(o.maxApiUnits);
    const s = await lookupPrivateFiles({ config, redis: connection, store, hashes: given, run: randomUUID(), maxApiUnits });
    await print(s, o.json);
    return (s.counts.failed ?? 0) + (s.counts.rejected ?? 0) + (s.counts.budget ?? 0) > 0 ? 1 : 0;
  } finally {
    connection.disconnect();
    await store.close();
    await redis.stop();
  }
}

async function print(s: PrivateLookupSummary, json: boolean | undefined): Promise<void> {
  if (json) return writeOut(`${JSON.stringify(s)}\n`);
  const counts = Object.entries(s.counts)
    .map(([k, n]) => `${n} ${k}`)
    .join(', ');
  await writeOut(
    [
      `private lookup: ${s.files.length} file(s): ${counts}`,
      `  API units spent: ${s.api_units}`,
      ...s.files.map(
        (f) =>
          `  ${f.outcome.padEnd(9)} ${f.sha256 ?? f.given}${f.gtiAssessment === false ? '  (no gti_assessment)' : ''}${f.error ? `  ${f.error}` : ''}`,
      ),
    ].join('\n') + '\n',
  );
}
