import { putList, type Attrs } from './hostActivity.js';
import { listLength, type RecordContext } from './RecordContext.js';
import { commandLine, shellCommand } from './values.js';
import { vocab } from './vocab.js';

const MAX_DEPTH = 6;

/** A `processes_tree` node; `time_offset` exists only on child nodes (spec: "present on child nodes"). */
export interface ProcessNode {
  name: string;
  process_id: string;
  time_offset?: number;
  children?: ProcessNode[];
}

/**
 * Process observations: created / terminated / killed / injected processes, shell commands and
 * the process tree. Big records get long encoded command lines and trees of hundreds of nodes.
 */
export function processActivity(ctx: RecordContext, out: Attrs): void {
  const { rng } = ctx;
  const big = ctx.scale > 1;
  putList(out, 'processes_created', listLength(ctx, 6), () => commandLine(ctx, big && rng.chance(0.05)));
  putList(out, 'command_executions', listLength(ctx, 6), () => (big && rng.chance(0.03) ? commandLine(ctx, true) : shellCommand(ctx)));
  putList(out, 'processes_terminated', listLength(ctx, 4), () =>
    rng.chance(0.5) ? ctx.samplePath : `${vocab.sysDirs[0]}\\${rng.pick(vocab.exes)}`,
  );
  putList(out, 'processes_killed', rng.skewedInt(0, 2), () =>
    rng.pick(['MsMpEng.exe', 'sqlservr.exe', 'outlook.exe', 'procexp64.exe', 'taskmgr.exe']),
  );
  putList(
    out,
    'processes_injected',
    rng.skewedInt(0, 2),
    () => `${vocab.sysDirs[0]}\\${rng.pick(['svchost.exe', 'explorer.exe', 'RegAsm.exe', 'notepad.exe', 'dllhost.exe'])}`,
  );
  const nodes = big ? listLength(ctx, 3) : rng.skewedInt(1, 7);
  out.processes_tree = processTree(ctx, Math.max(1, nodes));
}

/**
 * A tree of `count` nodes: the sample as the first root (sometimes a second root such as
 * explorer.exe), each further node attached to a recent node with a growing time offset.
 */
export function processTree(ctx: RecordContext, count: number): ProcessNode[] {
  const { rng } = ctx;
  const pid = (): string => String(rng.range(1, 2600) * 4);
  const roots: ProcessNode[] = [{ name: ctx.rng.chance(0.5) ? ctx.samplePath : `"${ctx.samplePath}"`, process_id: pid() }];
  if (count > 2 && rng.chance(0.2)) roots.push({ name: 'C:\\Windows\\explorer.exe', process_id: pid() });
  const all: ProcessNode[] = [...roots];
  const depth: number[] = roots.map(() => 0);
  let offset = 0;
  for (let i = all.length; i < count; i++) {
    // Prefer recent nodes as parents (real trees are chains of droppers more than flat fans),
    // but cap the depth so big trees stay as wide as real ones instead of 300 levels deep.
    let p = Math.max(0, all.length - 1 - rng.skewedInt(0, Math.min(all.length - 1, 6)));
    if (depth[p]! >= MAX_DEPTH) p = rng.int(roots.length);
    const parent = all[p]!;
    offset += rng.range(0, 40);
    const child: ProcessNode = { name: commandLine(ctx), process_id: pid(), time_offset: offset };
    (parent.children ??= []).push(child);
    all.push(child);
    depth.push(depth[p]! + 1);
  }
  if (all.length > roots.length) ctx.marks.add('child_time_offset');
  return roots;
}
