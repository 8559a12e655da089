import { ENV_ALIASES, ENV_MAP_PREFIXES, envSettings } from './loadConfig.js';

/**
 * `SANDTRAIL_*` names read outside the settings: the config file's path, the scheduler entry
 * point's source and start, the demo script's store; and the prefixes of the project's own test,
 * fuzz, soak and bench tools.
 */
const OTHER_NAMES = ['SANDTRAIL_CONFIG', 'SANDTRAIL_SOURCE', 'SANDTRAIL_START', 'SANDTRAIL_DEMO_DB'];
const TOOL_PREFIXES = ['SANDTRAIL_TEST_', 'SANDTRAIL_FUZZ_', 'SANDTRAIL_SOAK_', 'SANDTRAIL_BENCH_', 'SANDTRAIL_CHROMIUM'];

/**
 * The `SANDTRAIL_*` variables of `env` that sandtrail does not read (a misspelt setting is
 * otherwise ignored without a word, where an unknown config-file key is refused), each with the
 * closest name it reads when one is near.
 */
export function unknownEnvNames(env: NodeJS.ProcessEnv): { name: string; closest?: string }[] {
  const known = [...envSettings().map((s) => s.env), ...ENV_ALIASES.map((a) => a.env), ...OTHER_NAMES];
  const out: { name: string; closest?: string }[] = [];
  for (const name of Object.keys(env).sort()) {
    const prefixes = [...TOOL_PREFIXES, ...Object.values(ENV_MAP_PREFIXES)];
    if (!name.startsWith('SANDTRAIL_') || known.includes(name) || prefixes.some((p) => name.startsWith(p))) continue;
    let closest: { name: string; d: number } | undefined;
    for (const k of known) {
      const d = distance(name, k);
      if (d <= 3 && (!closest || d < closest.d)) closest = { name: k, d };
    }
    out.push(closest ? { name, closest: closest.name } : { name });
  }
  return out;
}

/** What a process says of each unknown variable (at warn): `SANDTRAIL_STOR is not a variable sandtrail reads: ignored (did you mean SANDTRAIL_STORE?)`. */
export function unknownEnvWarnings(env: NodeJS.ProcessEnv): { variable: string; message: string }[] {
  return unknownEnvNames(env).map((u) => ({
    variable: u.name,
    message: `${u.name} is not a variable sandtrail reads: ignored${u.closest ? ` (did you mean ${u.closest}?)` : ''}`,
  }));
}

/** Levenshtein distance. */
function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min((prev[j] as number) + 1, (row[j - 1] as number) + 1, (prev[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = row;
  }
  return prev[b.length] as number;
}
