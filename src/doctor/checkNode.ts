import { checkOf, type CheckResult } from './CheckResult.js';

/** Node the whole toolchain is exercised on (the engines range allows older 20.x, which lack fixes we rely on). */
const RECOMMENDED: readonly [number, number] = [20, 19];

/** `[major, minor]` of `20.19.2`, `v20.19.2` or `>=20.10`; undefined when not of that shape. */
function majorMinor(text: string): [number, number] | undefined {
  const m = /(\d+)\.(\d+)/.exec(text);
  return m ? [Number(m[1]), Number(m[2])] : undefined;
}

function atLeast(v: readonly [number, number], min: readonly [number, number]): boolean {
  return v[0] > min[0] || (v[0] === min[0] && v[1] >= min[1]);
}

/**
 * Node version: pass from 20.19, warn inside package.json's `engines` range below that, fail
 * below the range. `engines` is the range text (`>=20.10`), read by the caller from package.json.
 */
export function checkNode(version: string, engines: string | undefined): CheckResult {
  const c = checkOf('node', 'Node.js');
  const v = majorMinor(version);
  const min = engines && /^\s*>=/.test(engines) ? majorMinor(engines) : undefined;
  const fix = `install Node ${RECOMMENDED.join('.')} or later (e.g. from nodejs.org or NodeSource)`;
  if (!v) return c.warn(`cannot read the Node version "${version}"`, fix);
  const range = engines ? ` (package.json engines ${engines})` : '';
  if (min && !atLeast(v, min)) return c.fail(`Node ${version} is below the supported range${range}`, fix);
  if (!atLeast(v, RECOMMENDED)) return c.warn(`Node ${version}${range}: ${RECOMMENDED.join('.')} or later is recommended`, fix);
  return c.pass(`Node ${version}${range}`);
}
