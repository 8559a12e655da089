import { listLength, maybeUpper, type RecordContext } from './RecordContext.js';
import { anyPath, guid, mutexName, registryKey, serviceName, stem, systemPath, userPath } from './values.js';
import { vocab } from './vocab.js';

/** Attribute bag under construction; builders add only non-empty lists, as the real feed omits empty ones. */
export type Attrs = Record<string, unknown>;

/** Fills `out[key]` with `n` values from `make`, leaving the key out when `n` is 0. */
export function putList<T>(out: Attrs, key: string, n: number, make: () => T): void {
  if (n <= 0) return;
  const arr: T[] = new Array<T>(n);
  for (let i = 0; i < n; i++) arr[i] = make();
  out[key] = arr;
}

/**
 * File system, registry, mutex, service, module and miscellaneous host observations. For big
 * records (scale > 1) the long lists (files opened, registry keys, modules) dominate the size,
 * as in real Zenbox reports.
 */
export function hostActivity(ctx: RecordContext, out: Attrs): void {
  const { rng } = ctx;
  putList(out, 'files_opened', listLength(ctx, 18), () => anyPath(ctx));
  putList(out, 'files_written', listLength(ctx, 10), () => userPath(ctx));
  putList(out, 'files_deleted', listLength(ctx, 5), () => (rng.chance(0.3) ? ctx.samplePath : userPath(ctx)));
  putList(out, 'files_attribute_changed', listLength(ctx, 3), () => userPath(ctx));
  putList(out, 'files_copied', listLength(ctx, 2), () => ({ source: ctx.samplePath, destination: userPath(ctx) }));
  putList(out, 'files_dropped', listLength(ctx, 6), () => {
    // Most dropped files come from the shared pool: the same payload dropped by many samples.
    const sha = rng.chance(0.7) ? rng.pickSkewed(ctx.pools.droppedSha256) : rng.hex(64);
    return { path: userPath(ctx), sha256: maybeUpper(ctx, sha, 'upper_case_dropped_sha256') };
  });
  putList(out, 'modules_loaded', listLength(ctx, 14), () => (rng.chance(0.8) ? rng.pick(vocab.dlls) : systemPath(rng)));

  putList(out, 'registry_keys_opened', listLength(ctx, 14), () => registryKey(rng));
  putList(out, 'registry_keys_set', listLength(ctx, 6), () => {
    const key = registryKey(rng);
    if (rng.chance(ctx.rates.registryValueAbsent)) {
      ctx.marks.add('registry_value_absent');
      return { key };
    }
    const x = rng.next();
    const value = x < 0.4 ? userPath(ctx) : x < 0.7 ? String(rng.int(2)) : x < 0.85 ? guid(rng) : rng.hex(rng.range(8, 64));
    return { key, value };
  });
  putList(out, 'registry_keys_deleted', listLength(ctx, 3), () => registryKey(rng));

  putList(out, 'mutexes_created', listLength(ctx, 5), () => mutexName(rng));
  putList(out, 'mutexes_opened', listLength(ctx, 5), () => mutexName(rng));

  // Services are touched by a minority of samples; big reports touch more of them.
  if (rng.chance(ctx.scale > 1 ? 0.8 : 0.25)) {
    putList(out, 'services_opened', listLength(ctx, 4), () => serviceName(rng));
    putList(out, 'services_created', rng.int(2), () => serviceName(rng));
    putList(out, 'services_started', rng.int(3), () => serviceName(rng));
    putList(out, 'services_stopped', rng.int(3), () => serviceName(rng));
    putList(out, 'services_deleted', rng.int(2), () => serviceName(rng));
    putList(out, 'services_bound', rng.int(2), () => serviceName(rng));
  }

  putList(out, 'calls_highlighted', listLength(ctx, 8), () => rng.pick(vocab.apiCalls));
  putList(out, 'windows_searched', rng.skewedInt(0, 3), () => rng.pick(vocab.windowTitles));
  putList(out, 'windows_hidden', rng.skewedInt(0, 2), () => rng.pick(vocab.windowTitles));
  putList(out, 'signals_observed', rng.skewedInt(0, 2), () => rng.pick(vocab.signals));
  putList(out, 'invokes', listLength(ctx, 4), () => rng.pick(vocab.invokes));
  putList(out, 'permissions_requested', rng.skewedInt(0, 3), () => rng.pick(vocab.permissions));
  putList(out, 'signals_hooked', rng.skewedInt(0, 2), () => `WH_${rng.pick(['KEYBOARD_LL', 'MOUSE_LL', 'CBT', 'GETMESSAGE'])}`);
  putList(out, 'crypto_algorithms_observed', rng.skewedInt(0, 3), () => rng.pick(vocab.cryptoAlgorithms));
  putList(out, 'crypto_keys', rng.skewedInt(0, 2), () => rng.hex(rng.pick([32, 64])));
  putList(out, 'crypto_plain_text', rng.skewedInt(0, 2), () => `${stem(rng)}|${ctx.user}|${rng.pick(vocab.tlds)}|${rng.u32()}`);
  putList(
    out,
    'text_decoded',
    listLength(ctx, 3),
    () => `${rng.pick(['http://', 'cmd /c ', 'HKCU\\', 'Mozilla/5.0 '])}${stem(rng)}${rng.pick(vocab.extensions)}`,
  );
  putList(out, 'text_highlighted', rng.skewedInt(0, 3), () => rng.pick(vocab.windowTitles));

  if (rng.chance(0.04)) {
    // hosts_file is populated if and only if the sample modified it.
    ctx.marks.add('hosts_file');
    let hosts = '# Copyright (c) 1993-2009 Microsoft Corp.\r\n#\r\n127.0.0.1       localhost\r\n::1             localhost\r\n';
    for (let i = rng.range(1, 6); i > 0; i--)
      hosts += `127.0.0.1 ${rng.pick(['www.', 'update.', ''])}${rng.pick(['avast', 'kaspersky', 'eset', 'malwarebytes', 'microsoft'])}.com\r\n`;
    out.hosts_file = hosts;
  }
}
