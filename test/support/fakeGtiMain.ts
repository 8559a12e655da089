/**
 * Runs the fake GTI server (test/support/fakeGti.ts) standalone, for demos and manual runs.
 *
 *   npm run fake-gti -- --feed-dir DIR --api-key KEY [--port N] [--not-available-lag-minutes N] [--files N]
 *
 * Prints the base URL (`http://127.0.0.1:PORT/api/v3`) on stdout (the files' hashes, if any, on
 * stderr) and serves until SIGINT/SIGTERM.
 * Exit codes: 0 stopped by a signal, 1 could not start, 2 usage error.
 */
import { statSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { makeFakeFile, startFakeGti } from './fakeGti.js';

const HELP = `Usage: npm run fake-gti -- --feed-dir DIR --api-key KEY [options]
       npm run fake-gti -- --files N --api-key KEY [options]

Serves DIR (minute batches YYYYMMDDhhmm.jsonl.bz2, e.g. from npm run gen:feed, and optional
hourly packages YYYYMMDDhh.tar.bz2, built on the fly when absent) the way the GTI API does:
GET /api/v3/feeds/file_behaviours/{YYYYMMDDhhmm} and .../hourly/{YYYYMMDDhh} answer 302 to a
download URL on the same server. Every /api/v3 request must carry x-apikey: KEY.
With --files N it also knows N synthetic files (GET /files/{id}/behaviours, /file_behaviours/{id}
and its pcap/evtx/memdump/html and relationships, /private/files/{sha256}) and prints their hashes
on stderr. Prints the base URL (point GTI_BASE_URL at it) and serves until SIGINT/SIGTERM.

  --feed-dir DIR                   batch directory (required unless --files is given)
  --api-key KEY                    key clients must send (required; or env FAKE_GTI_APIKEY)
  --port N                         port on 127.0.0.1 (default: a random free one)
  --not-available-lag-minutes N    minute M answers NotAvailableYet until M + 1 + N minutes
                                   have passed (wall clock); default off
  --path-spelling S                file_behaviours (default) or file-behaviours
  --files N                        serve N synthetic files (3 behaviours, private report, artefacts)
  --verbose                        log every request (method, path, status) on stderr
  -h, --help                       show this help
`;

class UsageError extends Error {}

function intArg(name: string, v: string | undefined, min: number, max: number): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (v.trim() === '' || !Number.isInteger(n) || n < min || n > max)
    throw new UsageError(`--${name} must be an integer in [${min}, ${max}], got ${JSON.stringify(v)}`);
  return n;
}

async function main(): Promise<number> {
  let args;
  try {
    args = parseArgs({
      options: {
        'feed-dir': { type: 'string' },
        'api-key': { type: 'string' },
        port: { type: 'string' },
        'not-available-lag-minutes': { type: 'string' },
        'path-spelling': { type: 'string' },
        files: { type: 'string' },
        verbose: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (e) {
    console.error(`${(e as Error).message}\n\n${HELP}`);
    return 2;
  }
  if (args.help) {
    process.stdout.write(HELP);
    return 0;
  }
  let port: number | undefined;
  let lag: number | undefined;
  let fileCount: number | undefined;
  const feedDir = args['feed-dir'];
  const apiKey = args['api-key'] ?? process.env.FAKE_GTI_APIKEY;
  const spelling = args['path-spelling'] ?? 'file_behaviours';
  try {
    fileCount = intArg('files', args.files, 0, 1000);
    if (!feedDir && !fileCount) throw new UsageError('--feed-dir is required (unless --files is given)');
    if (feedDir && !statSync(feedDir, { throwIfNoEntry: false })?.isDirectory())
      throw new UsageError(`--feed-dir ${feedDir} is not a directory`);
    if (!apiKey) throw new UsageError('--api-key is required (or set FAKE_GTI_APIKEY)');
    if (spelling !== 'file_behaviours' && spelling !== 'file-behaviours')
      throw new UsageError(`--path-spelling must be file_behaviours or file-behaviours, got ${JSON.stringify(spelling)}`);
    port = intArg('port', args.port, 0, 65535);
    lag = intArg('not-available-lag-minutes', args['not-available-lag-minutes'], 0, 7 * 24 * 60);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    console.error(`${e.message}\n\nRun with --help for usage.`);
    return 2;
  }

  const files = Array.from({ length: fileCount ?? 0 }, (_, i) =>
    makeFakeFile(`fake-gti-${i}`, { withPrivate: true, artefactBytes: 64 * 1024 }),
  );
  let fake;
  try {
    fake = await startFakeGti({
      apiKey,
      feedDir,
      files,
      port,
      pathSpelling: spelling,
      faults: lag !== undefined ? { notAvailableLagMinutes: lag } : undefined,
      onRequest: args.verbose
        ? (r) => console.error(`${new Date().toISOString()} ${r.method} ${r.path} ${r.status}${r.xTool ? ` x-tool=${r.xTool}` : ''}`)
        : undefined,
    });
  } catch (e) {
    console.error(`fake GTI could not start: ${(e as Error).message}`);
    return 1;
  }
  console.log(fake.baseUrl);
  for (const f of files) console.error(`file sha256=${f.sha256} md5=${f.md5} sha1=${f.sha1} behaviours=${f.behaviours.length}`);
  const server = fake;
  return new Promise<number>((resolve) => {
    const stop = (signal: string): void => {
      console.error(`${signal}: stopping the fake GTI server`);
      void server.close().then(() => resolve(0));
    };
    process.once('SIGINT', () => stop('SIGINT'));
    process.once('SIGTERM', () => stop('SIGTERM'));
  });
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);
