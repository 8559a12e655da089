import { open, rename, rm } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { Transform, type Writable } from 'node:stream';
import { basename, dirname, join } from 'node:path';
import { SandtrailError } from '../../errors/index.js';
import { describeSelection, exportMisp, exportStix, saveExport, type ExportSelection, type ExportSummary } from '../../share/index.js';
import type { PivotKind } from '../../store/index.js';
import { escapeControls, withStore, type CliContext } from '../context.js';
import { parseSince } from '../sinceFlag.js';
import { PIVOT_FLAGS } from './query.js';

/** The formats `export` writes. */
export const EXPORT_FORMATS = ['stix', 'misp'] as const;
type Format = (typeof EXPORT_FORMATS)[number];

/** The selection the flags name: at most one pivot, a watch, a window; at least one of them. */
export function exportSelection(opts: Record<string, unknown>, now = Date.now()): ExportSelection {
  const given = PIVOT_FLAGS.filter(([, key, kind]) => kind !== null && typeof opts[key] === 'string');
  if (given.length > 1)
    throw new SandtrailError('USAGE', `give at most one pivot flag, got ${given.map(([f]) => f.split(' ')[0]).join(', ')}`);
  const sel: ExportSelection = {};
  const [flag, key, kind] = given[0] ?? [];
  if (flag && key && kind) {
    const value = (opts[key] as string).trim();
    if (value === '') throw new SandtrailError('USAGE', `${flag.split(' ')[0]} needs a value, got an empty one`);
    sel.pivot = { kind: kind as PivotKind, value };
  }
  if (typeof opts.watch === 'string') sel.watch = opts.watch;
  const seconds = (raw: unknown, name: string): number | undefined =>
    typeof raw === 'string' ? Math.floor(parseSince(raw, now, name) / 1000) : undefined;
  const since = seconds(opts.since, '--since');
  const until = seconds(opts.until, '--until');
  if (since !== undefined) sel.since = since;
  if (until !== undefined) sel.until = until;
  if (since !== undefined && until !== undefined && until <= since) throw new SandtrailError('USAGE', '--until must be after --since');
  if (!sel.pivot && sel.watch === undefined && since === undefined && until === undefined) {
    throw new SandtrailError(
      'USAGE',
      'say what to export: a pivot flag (--behash, --sigma-rule, ...), --watch NAME, or a window (--since/--until)',
    );
  }
  return sel;
}

/** Stored text escaped on its way to a terminal or file: JSON escapes, so the JSON parses back to the same values. */
function escaping(): Transform {
  // strings as written (whole JSON pieces), never bytes cut inside a character
  return new Transform({
    decodeStrings: false,
    transform(chunk: string | Buffer, _enc, done): void {
      done(null, escapeControls(typeof chunk === 'string' ? chunk : chunk.toString('utf8'), '\n'));
    },
  });
}

/**
 * An --out file that cannot be written, named with the system's reason: where it cannot be
 * created (no such directory, no permission) is the command's mistake (USAGE); a write that fails
 * once under way (a full disk) is the output's (OUTPUT_FAILED, exit 1).
 */
function outError(target: string, err: unknown, opening: boolean): SandtrailError {
  const reason = (err as NodeJS.ErrnoException).code ?? (err instanceof Error ? err.message : String(err));
  return new SandtrailError(opening ? 'USAGE' : 'OUTPUT_FAILED', `--out ${target}: cannot write it (${reason})`, {}, { cause: err });
}

/**
 * `sandtrail export`: a selection of behaviours as a STIX 2.1 bundle or a MISP event, streamed
 * to stdout or to --out (written beside it and renamed once whole: a failed export leaves no
 * half file). The summary goes to stderr, or stdout with --json and --out.
 */
export async function exportCommand(opts: Record<string, unknown>, ctx: CliContext): Promise<number> {
  if (typeof opts.save === 'string') return saveCommand(opts.save, opts, ctx);
  const format = (opts.format ?? 'stix') as Format;
  if (!EXPORT_FORMATS.includes(format))
    throw new SandtrailError('USAGE', `--format must be ${EXPORT_FORMATS.join(' or ')}, got "${String(opts.format)}"`);
  const selection = exportSelection(opts);
  const target = typeof opts.out === 'string' ? opts.out : undefined;
  if (opts.json && !target) throw new SandtrailError('USAGE', '--json prints the summary on stdout: give --out FILE for the export');
  const summary = await withStore(ctx, async (store) => {
    if (selection.watch !== undefined && !(await store.watches.get(selection.watch))) {
      throw new SandtrailError('NOT_FOUND', `no watch named "${selection.watch}" in ${store.spec}`);
    }
    const run = (out: Writable): Promise<ExportSummary> => (format === 'misp' ? exportMisp : exportStix)(store, selection, out);
    if (!target) {
      const out = escaping();
      // stdout stays open; a closed pipe (`| head`) ends the process (run.ts)
      const piped = pipeline(out, process.stdout, { end: false });
      const s = await run(out);
      out.end();
      await piped;
      return s;
    }
    const temp = join(dirname(target), `.${basename(target)}.${process.pid}.partial`);
    const file = await open(temp, 'w').catch((err: unknown) => {
      throw outError(target, err, true);
    });
    const out = escaping();
    // any error of the file (a full disk) destroys both streams: the export's next write fails with it
    const piped = pipeline(out, file.createWriteStream());
    try {
      const s = await run(out);
      out.end();
      await piped;
      await rename(temp, target).catch((err: unknown) => {
        throw outError(target, err, false);
      });
      return s;
    } catch (err) {
      out.destroy();
      await piped.catch(() => undefined);
      await rm(temp, { force: true });
      throw (err as NodeJS.ErrnoException).syscall ? outError(target, err, false) : err;
    }
  });
  const what = format === 'misp' ? 'MISP objects and attributes' : 'STIX objects';
  const line = `exported ${summary.behaviours} behaviour(s) as ${summary.objects} ${what} (${describeSelection(selection)})${target ? ` to ${target}` : ''}`;
  if (opts.json) process.stdout.write(`${JSON.stringify({ format, ...summary, ...(target ? { out: target } : {}) })}\n`);
  else process.stderr.write(`${escapeControls(line)}\n`);
  return 0;
}

/**
 * `sandtrail export --save NAME`: the selection kept in the store as a shared collection that
 * `serve` offers over TAXII 2.1; saving again under the name adds what the selection holds now.
 */
async function saveCommand(name: string, opts: Record<string, unknown>, ctx: CliContext): Promise<number> {
  if (opts.out !== undefined || (opts.format !== undefined && opts.format !== 'stix'))
    throw new SandtrailError('USAGE', '--save keeps the export in the store as a TAXII collection (STIX): it takes no --out or --format');
  const selection = exportSelection(opts);
  const r = await withStore(
    ctx,
    async (store) => {
      if (selection.watch !== undefined && !(await store.watches.get(selection.watch))) {
        throw new SandtrailError('NOT_FOUND', `no watch named "${selection.watch}" in ${store.spec}`);
      }
      return saveExport(store, name, selection);
    },
    // an existing store only: a mistyped --store must not become an empty one
    { mustExist: true },
  );
  const summary = { collection: r.collection.id, name, behaviours: r.behaviours, added: r.added };
  if (opts.json) process.stdout.write(`${JSON.stringify(summary)}\n`);
  else
    process.stderr.write(
      `${escapeControls(`saved ${r.behaviours} behaviour(s) as TAXII collection ${r.collection.id} "${name}" (${describeSelection(selection)}): ${r.added} new object(s)`)}\n`,
    );
  return 0;
}
