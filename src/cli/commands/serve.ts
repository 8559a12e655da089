import { once } from 'node:events';
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { SandtrailError } from '../../errors/index.js';
import { startReadApi } from '../../serve/index.js';
import { openStore, type Store } from '../../store/index.js';
import { WatchSyncer } from '../../taxii/index.js';
import { stopOnSignals } from '../stopOnSignals.js';
import type { CliContext } from '../context.js';

/** `sandtrail serve`: the v3-compatible read API and the hunting page, until SIGINT/SIGTERM. */
export async function serveCommand(ctx: CliContext): Promise<number> {
  const keys = (ctx.config.serve.apiKeys ?? '').split(',').map((k) => k.trim());
  if (ctx.config.gti.apiKey && keys.includes(ctx.config.gti.apiKey))
    throw new SandtrailError(
      'CONFIG_INVALID',
      'serve.apiKeys holds the GTI API key: give serve keys of its own (the GTI key is never accepted here)',
    );
  const store = openStore(ctx.config.store, ctx.config, { readOnly: true });
  // TAXII watch collections are written as they are read: a store of its own, opened on the first
  // sync and only on an existing store (serve never creates one)
  let writer: Store | undefined;
  const syncer = new WatchSyncer(async () => {
    writer = openStore(ctx.config.store, ctx.config, { mustExist: true });
    return writer;
  }, ctx.log);
  try {
    // a cluster out of reach, or holding no store under this prefix, is said now, as every read says it
    await store.check();
    // the first SIGINT or SIGTERM lets requests under way finish; a second of either stops at once.
    // Taken before the address is printed: a signal sent on reading it must find the handler there
    const stop = stopOnSignals('the read API lets requests under way finish');
    try {
      const api = await startReadApi({ config: ctx.config, store, log: ctx.log, syncWatch: (w) => syncer.sync(w) });
      process.stderr.write(`sandtrail serve: ${api.url}/ (hunting page), API base ${api.url}/api/v3\n`);
      if (!stop.signal.aborted) await once(stop.signal, 'abort');
      ctx.log.info('stopping the read API');
      await api.close();
    } finally {
      stop.dispose();
    }
    return 0;
  } finally {
    await writer?.close();
    await store.close();
  }
}

/** `--port` / `--host` of serve over the configured ones. */
export async function serveContext(base: CliContext, opts: { port?: string; host?: string }): Promise<CliContext> {
  // digits only: Number() would also read 1e3, 0x50 and an empty string
  const port = opts.port === undefined ? base.config.serve.port : /^\d{1,5}$/.test(opts.port) ? Number(opts.port) : Number.NaN;
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new SandtrailError('USAGE', '--port must be a port number (0-65535)');
  const host = opts.host ?? base.config.serve.host;
  // an address that is none (empty, 999.1.1.1) is a usage error, not "reachable beyond this machine"
  if (!/^[A-Za-z0-9.:_-]+$/.test(host) || (/^[\d.]+$/.test(host) && isIP(host) === 0)) {
    throw new SandtrailError('USAGE', `--host must be an address or host name to bind, got "${host}"`);
  }
  // a name that resolves to nothing is a mistake to name as such, not "reachable beyond this machine"
  const resolves = (name: string): Promise<boolean> =>
    lookup(name).then(
      () => true,
      () => false,
    );
  if (isIP(host) === 0 && !(await resolves(host))) {
    throw new SandtrailError('USAGE', `--host ${host} does not resolve to an address of this machine to bind`);
  }
  const config = { ...base.config, serve: { ...base.config.serve, port, host } };
  return { ...base, config: Object.freeze(config) };
}
