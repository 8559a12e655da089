/** Memory of this process and its descendants, read from /proc (Linux). */
import { readdirSync, readFileSync } from 'node:fs';

/** One reading of /proc/<pid>/status. */
export interface ProcStatus {
  name: string;
  /** Resident set size now, KB. */
  rssKb: number;
  /** Peak resident set size over the process's life ("high water mark"), KB. */
  hwmKb: number;
}

/** Peak memory of one process role over a phase. */
export interface RolePeak {
  role: string;
  /**
   * Largest VmHWM seen: exact for processes read just before they stop, a lower bound for
   * short-lived ones. For this process, the largest sampled VmRSS (its HWM predates the phase).
   */
  peakMb: number;
  /** Processes seen under this role (e.g. one lbzip2 per batch file). */
  processes: number;
}

/** Reads VmRSS and VmHWM of a live process; undefined once it has exited. */
export function readStatus(pid: number): ProcStatus | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return undefined;
  }
  const field = (key: string): number => Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(text)?.[1] ?? 0);
  const name = /^Name:\s+(.*)$/m.exec(text)?.[1]?.trim() ?? '?';
  return { name, rssKb: field('VmRSS'), hwmKb: field('VmHWM') };
}

/** Direct children of a process, from every thread's `children` list (spawns can come from any thread). */
export function childrenOf(pid: number): number[] {
  const out: number[] = [];
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tids) {
    try {
      for (const c of readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim().split(/\s+/)) if (c) out.push(Number(c));
    } catch {
      // thread or process gone meanwhile
    }
  }
  return out;
}

/**
 * Samples the process tree under this process on an interval and keeps, per role, the largest
 * VmHWM seen. Known pids get their given role; any other descendant is named after its
 * executable and its nearest named ancestor, e.g. `lbzip2 (feed-worker)`, so short-lived decoder
 * children are still attributed to the stage that spawned them.
 */
export class TreeSampler {
  private readonly roles = new Map<number, string>([[process.pid, 'bench']]);
  private readonly peaks = new Map<string, { hwmKb: number; pids: Set<number> }>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly intervalMs = 100) {}

  /** Names a process (a worker, redis-server) so its figures get a stable label. */
  name(pid: number, role: string): void {
    this.roles.set(pid, role);
  }

  /** Starts sampling (and takes one sample right away). */
  start(): this {
    this.sample();
    this.timer = setInterval(() => this.sample(), this.intervalMs);
    // Sampling must never keep the benchmark alive on its own.
    this.timer.unref();
    return this;
  }

  /** Takes a last sample and stops; returns the peaks, largest first. */
  stop(): RolePeak[] {
    this.sample();
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    return this.result();
  }

  /** Peaks so far, largest first. */
  result(): RolePeak[] {
    return [...this.peaks.entries()]
      .map(([role, p]) => ({ role, peakMb: p.hwmKb / 1024, processes: p.pids.size }))
      .sort((a, b) => b.peakMb - a.peakMb);
  }

  /** One pass over the tree; also callable directly right before a process is stopped. */
  sample(): void {
    const walk = (pid: number, parentRole: string, parentName: string): void => {
      const st = readStatus(pid);
      if (!st) return;
      const known = this.roles.get(pid);
      const role = known ?? `${st.name} (${parentRole})`;
      // An unnamed child with its parent's name is a spawn caught between fork and exec (e.g. a
      // `node` about to become lbzip2): its RSS is the parent's shared pages, not a process of its own.
      const forkNotExec = known === undefined && st.name === parentName;
      // This process's VmHWM covers its whole life (feed generation included): sample its RSS instead.
      if (!forkNotExec) this.note(role, pid, pid === process.pid ? st.rssKb : Math.max(st.hwmKb, st.rssKb));
      for (const c of childrenOf(pid)) walk(c, known ?? parentRole, st.name);
    };
    walk(process.pid, 'bench', '');
  }

  private note(role: string, pid: number, kb: number): void {
    let p = this.peaks.get(role);
    if (!p) this.peaks.set(role, (p = { hwmKb: 0, pids: new Set() }));
    p.hwmKb = Math.max(p.hwmKb, kb);
    p.pids.add(pid);
  }
}

/** CPU seconds a process has used itself, and those of its children it has already reaped. */
export interface CpuTimes {
  self: number;
  children: number;
}

/** Linux reports /proc times in clock ticks; USER_HZ is 100 on every architecture Node supports. */
const TICKS = 100;

/** CPU time of a live process from /proc/<pid>/stat; undefined once it has exited. */
export function readCpu(pid: number): CpuTimes | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name may hold spaces and parentheses: fields are counted after its closing ')'.
  const f = text
    .slice(text.lastIndexOf(')') + 2)
    .split(' ')
    .map(Number);
  // after the name: state(0) ppid(1) ... utime(11) stime(12) cutime(13) cstime(14)
  const at = (i: number): number => f[i] ?? 0;
  return { self: (at(11) + at(12)) / TICKS, children: (at(13) + at(14)) / TICKS };
}

/**
 * CPU seconds of this process's reaped children (and the descendants they reaped in turn), from
 * /proc/self/stat: the delta over a phase is the CPU of a child process tree that ran and exited.
 */
export function childCpuSeconds(): number {
  return readCpu(process.pid)?.children ?? 0;
}
