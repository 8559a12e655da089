import type { FeedRecord } from './generateRecord.js';
import type { Rng } from './Rng.js';

/** The kinds of broken line the generator plants; a pipeline must reject each without crashing. */
export const MALFORMED_KINDS = [
  'not_json',
  'truncated_json',
  'json_array',
  'json_number',
  'bad_id_not_hex',
  'bad_id_no_underscore',
  'missing_id',
] as const;

/** One of {@link MALFORMED_KINDS}. */
export type MalformedKind = (typeof MALFORMED_KINDS)[number];

const GARBAGE = [
  '<html><head><title>502 Bad Gateway</title></head><body>502 Bad Gateway</body></html>',
  "{type: 'file_behaviour', id: undefined}",
  'file_behaviour\tZenbox\tMALWARE',
  "{'id': 'python-repr', 'attributes': {}}",
  '\u0000\u0001BZh91AY&SY',
  'null,',
];

/**
 * A broken line of the given kind. `record` supplies a realistic body for the kinds that damage a
 * record (truncated, bad or missing id), so those lines are as long and plausible as real ones.
 * The line never contains a newline.
 */
export function malformedLine(rng: Rng, kind: MalformedKind, record: () => FeedRecord): string {
  switch (kind) {
    case 'not_json':
      return rng.pick(GARBAGE);
    case 'truncated_json': {
      // A cut inside the object is never valid JSON: at least the closing brace is missing.
      const s = JSON.stringify(record());
      return s.slice(0, Math.max(1, Math.floor(s.length * (0.1 + 0.8 * rng.next()))));
    }
    case 'json_array':
      return rng.chance(0.5) ? `[${JSON.stringify(record())}]` : '[]';
    case 'json_number':
      return String(rng.chance(0.5) ? 1730419200 + rng.int(1e6) : rng.int(100));
    case 'bad_id_not_hex': {
      const r = record();
      const rest = r.id.slice(64);
      const x = rng.next();
      // Non-hex characters, a SHA-1 in place of the SHA-256, or one digit short.
      const sha = x < 0.4 ? `${rng.hex(60)}zzqx` : x < 0.7 ? rng.hex(40) : rng.hex(63);
      r.id = sha + rest;
      return JSON.stringify(r);
    }
    case 'bad_id_no_underscore': {
      const r = record();
      r.id = rng.chance(0.5) ? r.id.slice(0, 64) : r.id.slice(0, 64) + r.id.slice(65);
      return JSON.stringify(r);
    }
    case 'missing_id': {
      const r: Partial<FeedRecord> = record();
      delete r.id;
      return JSON.stringify(r);
    }
  }
}
