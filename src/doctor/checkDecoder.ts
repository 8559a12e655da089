import { errorCode } from '../errors/index.js';
import { findExecutable, resolveBzip2Decoder, type DecoderChoice, type ExecutableLookup } from '../feed/index.js';
import { checkOf, type CheckResult } from './CheckResult.js';

const INSTALL = 'apt-get install lbzip2';

/** The bzip2 decoder the feed stage would spawn, resolved exactly as it does (feed.decoder, PATH from the caller). */
export function checkDecoder(choice: DecoderChoice, threads: number, lookup: ExecutableLookup): CheckResult {
  const c = checkOf('decoder', 'bzip2 decoder');
  try {
    const dec = resolveBzip2Decoder(choice, threads, lookup);
    const found = `${dec.name} (${dec.path})`;
    if (dec.name !== 'bzip2') return c.pass(found);
    // bzip2 decodes on one core at about 40% of lbzip2's speed: the feed stage's usual bottleneck
    if (choice === 'bzip2' && findExecutable('lbzip2', lookup.pathEnv, lookup.extraDirs)) {
      return c.warn(`${found}, chosen by feed.decoder although lbzip2 is installed: slow`, 'set SANDTRAIL_FEED_DECODER=auto');
    }
    return c.warn(`only ${found}: single-threaded, about 2.5x slower than lbzip2`, INSTALL);
  } catch (err) {
    if (errorCode(err) !== 'DECODER_UNAVAILABLE') throw err;
    const which = choice === 'auto' ? 'lbzip2, pbzip2 or bzip2' : `${choice} (feed.decoder)`;
    return c.fail(
      `no ${which} on PATH: every .bz2 batch would fail`,
      choice === 'auto' ? INSTALL : `${INSTALL}, or set SANDTRAIL_FEED_DECODER=auto`,
    );
  }
}
