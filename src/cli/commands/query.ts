import { SandtrailError } from '../../errors/index.js';
import { canonicalBehaviourId } from '../../normalize/index.js';
import type { PivotKind, PrivateFileKey } from '../../store/index.js';
import { withStore, writeOut, type CliContext } from '../context.js';

/** Flag name → behaviour pivot kind and/or private-file key, in the order `--help` lists them. */
export const PIVOT_FLAGS: readonly [flag: string, key: string, kind: PivotKind | null, what: string, privateKey?: PrivateFileKey][] = [
  ['--behash <value>', 'behash', 'behash', 'behaviour similarity hash'],
  ['--sigma-rule <id>', 'sigmaRule', 'sigma_rule_id', 'sigma rule_id'],
  ['--ja3 <digest>', 'ja3', 'ja3', 'JA3 TLS client fingerprint'],
  ['--ja3s <digest>', 'ja3s', 'ja3s', 'JA3S TLS server fingerprint'],
  ['--dropped-sha256 <hash>', 'droppedSha256', 'dropped_sha256', 'SHA-256 of a dropped file'],
  ['--sha256 <hash>', 'sha256', 'sha256', 'SHA-256 of the analysed file (behaviours and private files)', 'sha256'],
  ['--md5 <hash>', 'md5', null, 'MD5 of a private file', 'md5'],
  ['--sha1 <hash>', 'sha1', null, 'SHA-1 of a private file', 'sha1'],
  ['--vhash <value>', 'vhash', null, 'vhash of a private file', 'vhash'],
];

/** How a private file's id is printed beside behaviour ids: marked, so the two never mix. */
export const PRIVATE_PREFIX = 'private:';

/** `sandtrail query`: ids of behaviours (and `private:<sha256>` of private files) matching exactly one pivot. */
export async function queryCommand(opts: Record<string, unknown>, ctx: CliContext): Promise<number> {
  const given = PIVOT_FLAGS.filter(([, key]) => typeof opts[key] === 'string');
  if (given.length !== 1) {
    throw new SandtrailError('USAGE', `give exactly one of ${PIVOT_FLAGS.map(([f]) => f.split(' ')[0]).join(', ')}`);
  }
  const [flag, key, kind, , privateKey] = given[0] as (typeof PIVOT_FLAGS)[number];
  const value = opts[key] as string;
  // an empty value (an unset shell variable) matches nothing: a mistake in the command, said as one
  if (value.trim() === '') throw new SandtrailError('USAGE', `${flag.split(' ')[0]} needs a value, got an empty one`);
  return withStore(ctx, async (store) => {
    const ids = kind ? await store.sink.query(kind, value) : [];
    if (privateKey) ids.push(...(await store.privateFiles.query(privateKey, value)).map((id) => `${PRIVATE_PREFIX}${id}`));
    await writeOut(opts.json ? `${JSON.stringify(ids)}\n` : ids.map((id) => `${id}\n`).join(''));
    // said on stderr, so a pipe reading ids still gets none and a person sees why nothing printed
    if (ids.length === 0 && !opts.json)
      process.stderr.write(`sandtrail: nothing matches ${flag.split(' ')[0]} ${value} in ${store.spec}\n`);
    return 0;
  });
}

/**
 * `sandtrail get ID`: one stored behaviour document, with the artefacts downloaded for it; or a
 * private file report (`private:<sha256>`, or a bare SHA-256), marked `"private": true`.
 */
export async function getCommand(id: string, opts: { json?: boolean }, ctx: CliContext): Promise<number> {
  return withStore(ctx, async (store) => {
    const bare = id.startsWith(PRIVATE_PREFIX) ? id.slice(PRIVATE_PREFIX.length) : id;
    let out: Record<string, unknown> | null = null;
    if (/^[0-9a-fA-F]{64}$/.test(bare)) {
      const doc = await store.privateFiles.get(bare);
      if (doc) out = { private: true, ...doc };
    } else {
      const doc = await store.sink.get(canonicalBehaviourId(id));
      if (doc) {
        const artefacts = await store.artefacts.list(doc.id);
        out = artefacts.length
          ? {
              ...doc,
              artefacts: Object.fromEntries(
                artefacts.map(({ kind, path, size, sha256, source, fetchedAt }) => [
                  kind,
                  { path, size, sha256, source, fetched_at: new Date(fetchedAt).toISOString() },
                ]),
              ),
            }
          : { ...doc };
      }
    }
    if (!out) throw new SandtrailError('NOT_FOUND', `nothing with id "${id}" in ${store.spec}`);
    await writeOut(`${opts.json ? JSON.stringify(out) : JSON.stringify(out, null, 2)}\n`);
    return 0;
  });
}

/** `sandtrail artefacts list ID`: what was downloaded for one behaviour report. */
export async function artefactsListCommand(id: string, opts: { json?: boolean }, ctx: CliContext): Promise<number> {
  return withStore(ctx, async (store) => {
    // the id as get takes it: the sample hash in any case
    const canonical = canonicalBehaviourId(id);
    const list = await store.artefacts.list(canonical);
    if (list.length === 0 && !(await store.sink.get(canonical))) {
      throw new SandtrailError('NOT_FOUND', `nothing with id "${id}" in ${store.spec}`);
    }
    if (opts.json) await writeOut(`${JSON.stringify(list)}\n`);
    else if (list.length === 0) await writeOut(`no artefacts recorded for ${id}\n`);
    else
      await writeOut(list.map((a) => `${a.kind.padEnd(8)} ${String(a.size).padStart(12)}  ${a.sha256}  ${a.source}  ${a.path}\n`).join(''));
    return 0;
  });
}
