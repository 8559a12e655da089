import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * The Python of the ecosystem's own checkers (stix2-validator, stix2-patterns, stix2, pymisp,
 * taxii2-client, vt-py): SANDTRAIL_TEST_PYTHON, or the virtual environment scripts/test-python.sh
 * makes (the test command's setup runs it). `skip` says why there is none.
 */
export function testPython(): { python: string } | { skip: string } {
  const given = process.env.SANDTRAIL_TEST_PYTHON;
  if (given) return existsSync(given) ? { python: given } : { skip: `SANDTRAIL_TEST_PYTHON=${given} does not exist` };
  const venv = join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'sandtrail', 'test-python', 'bin', 'python3');
  return existsSync(venv) ? { python: venv } : { skip: `no ${venv}: run scripts/test-python.sh (the test command does)` };
}

/** Runs a Python script and parses the JSON it prints; rejects with its stderr on a non-zero exit. */
export function runPythonJson<T>(python: string, script: string, args: string[], timeoutMs = 120_000): Promise<T> {
  return new Promise((resolve, reject) => {
    execFile(python, [script, ...args], { maxBuffer: 64 * 1024 * 1024, timeout: timeoutMs }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${script} failed: ${err.message}\n${stderr}`));
      else {
        try {
          resolve(JSON.parse(stdout) as T);
        } catch {
          reject(new Error(`${script} printed no JSON: ${stdout.slice(0, 500)}\n${stderr}`));
        }
      }
    });
  });
}
