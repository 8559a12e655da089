import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { unknownEnvNames, type Config } from '../../config/index.js';
import { formatReport, runDoctor } from '../../doctor/index.js';
import { writeOut } from '../context.js';
import { packageRoot } from '../packageRoot.js';

/** package.json's `engines.node`, or undefined when it cannot be read (doctor still checks the version). */
function enginesNode(): string | undefined {
  try {
    const pkg = JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { engines?: { node?: unknown } };
    return typeof pkg.engines?.node === 'string' ? pkg.engines.node : undefined;
  } catch {
    return undefined;
  }
}

/**
 * `sandtrail doctor [--json]`: checks the installation and explains what to fix; exit 0 when
 * nothing fails (warnings allowed), 1 otherwise. `config` is a thunk so an invalid
 * configuration becomes a failing check instead of a usage error. The process environment is
 * read here, at the edge, and handed down.
 */
export async function doctorCommand(o: { json?: boolean }, config: () => Config, env: NodeJS.ProcessEnv): Promise<number> {
  const report = await runDoctor(config, {
    nodeVersion: process.versions.node,
    engines: enginesNode(),
    pathEnv: env.PATH ?? '',
    cwd: process.cwd(),
    isRoot: process.getuid?.() === 0,
    unknownEnv: unknownEnvNames(env),
  });
  await writeOut(o.json ? `${JSON.stringify(report)}\n` : formatReport(report));
  return report.ok ? 0 : 1;
}
