import { SandtrailError } from '../../errors/index.js';
import type { PivotKind } from '../../store/index.js';
import { openStore } from '../../store/index.js';
import { writeOut, type CliContext } from '../context.js';

/** Flag name → pivot kind, in the order `--help` lists them. */
export const PIVOT_FLAGS: readonly [flag: string, key: string, kind: PivotKind, what: string][] = [
  ['--behash <value>', 'behash', 'behash', 'behaviour similarity hash'],
  ['--sigma-rule <id>', 'sigmaRule', 'sigma_rule_id', 'sigma rule_id'],
  ['--ja3 <digest>', 'ja3', 'ja3', 'JA3 TLS client fingerprint'],
  ['--ja3s <digest>', 'ja3s', 'ja3s', 'JA3S TLS server fingerprint'],
  ['--dropped-sha256 <hash>', 'droppedSha256', 'dropped_sha256', 'SHA-256 of a dropped file'],
  ['--sha256 <hash>', 'sha256', 'sha256', 'SHA-256 of the analysed file'],
];

/** `sandtrail query`: ids of behaviours matching exactly one pivot. */
export async function queryCommand(opts: Record<string, unknown>, ctx: CliContext): Promise<number> {
  const given = PIVOT_FLAGS.filter(([, key]) => typeof opts[key] === 'string');
  if (given.length !== 1) {
    throw new SandtrailError('USAGE', `give exactly one of ${PIVOT_FLAGS.map(([f]) => f.split(' ')[0]).join(', ')}`);
  }
  const [, key, kind] = given[0] as (typeof PIVOT_FLAGS)[number];
  const store = openStore(ctx.config.store, ctx.config);
  try {
    const ids = await store.sink.query(kind, opts[key] as string);
    await writeOut(opts.json ? `${JSON.stringify(ids)}\n` : ids.map((id) => `${id}\n`).join(''));
    return 0;
  } finally {
    await store.close();
  }
}

/** `sandtrail get ID`: one stored document. */
export async function getCommand(id: string, opts: { json?: boolean }, ctx: CliContext): Promise<number> {
  const store = openStore(ctx.config.store, ctx.config);
  try {
    const doc = await store.sink.get(id);
    if (!doc) {
      process.stderr.write(`sandtrail: no behaviour with id "${id}" in ${store.spec}\n`);
      return 1;
    }
    await writeOut(`${opts.json ? JSON.stringify(doc) : JSON.stringify(doc, null, 2)}\n`);
    return 0;
  } finally {
    await store.close();
  }
}
