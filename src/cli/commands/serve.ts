import { once } from 'node:events';
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { SandtrailError } from '../../errors/index.js';
import { startReadApi } from '../../serve/index.js';
import { openStore } from '../../store/index.js';
import type { CliContext } from '../context.js';

/** `sandtrail serve`: the v3-compatible read API and the hunting page, until SIGINT/SIGTERM. */
export async function serveCommand(ctx: CliContext): Promise<number> {
  const store = openStore(ctx.config.store, ctx.config, { readOnly: true });
  try {
    const api = await startReadApi({ config: ctx.config, store, log: ctx.log });
    process.stderr.write(`sandtrail serve: ${api.url}/ (hunting page), API base ${api.url}/api/v3\n`);
    await Promise.race([once(process, 'SIGINT'), once(process, 'SIGTERM')]);
    ctx.log.info('stopping the read API');
    await api.close();
    return 0;
  } finally {
    await store.close();
  }
}

/** `--port` / `--host` of serve over the configured ones. */
export async function serveContext(base: CliContext, opts: { port?: string; host?: string }): Promise<CliContext> {
  const port = opts.port === undefined ? base.config.serve.port : Number(opts.port);
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
