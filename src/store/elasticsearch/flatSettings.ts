const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Settings as dotted keys, whether the cluster answered them flat or nested. */
export function flatSettings(settings: unknown, prefix = '', out: Record<string, unknown> = {}): Record<string, unknown> {
  if (!isObj(settings)) return out;
  for (const [k, v] of Object.entries(settings)) {
    if (isObj(v)) flatSettings(v, `${prefix}${k}.`, out);
    else out[`${prefix}${k}`] = v;
  }
  return out;
}
