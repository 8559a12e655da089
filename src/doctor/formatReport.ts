import type { DoctorReport } from './CheckResult.js';

const LABEL = { pass: 'PASS', warn: 'WARN', fail: 'FAIL' } as const;

/** Human output: one line per check, its fix indented below it, then a count. */
export function formatReport(r: DoctorReport): string {
  const lines: string[] = [];
  for (const c of r.checks) {
    lines.push(`${LABEL[c.status]}  ${c.title}: ${c.detail}`);
    if (c.fix) lines.push(`      fix: ${c.fix}`);
  }
  const count = (s: keyof typeof LABEL): number => r.checks.filter((c) => c.status === s).length;
  lines.push('', `${count('pass')} passed, ${count('warn')} warnings, ${count('fail')} failed`);
  return `${lines.join('\n')}\n`;
}
