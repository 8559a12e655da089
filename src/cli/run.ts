import { exitWhenDone } from '../lifecycle/index.js';
import { main } from './main.js';

// A closed pipe (`sandtrail query ... | head`) is a normal way for a reader to stop.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0);
  throw err;
});

/** How long a finished command may be kept alive by something left open before it exits anyway. */
const LINGER_MS = 5000;

// Set the code and let the event loop end, so buffered stdout/stderr are flushed.
main(process.argv, process.env).then(
  (code) => {
    process.exitCode = code;
    // bounded: a socket a library left open (a Redis that stopped answering mid-command) must not keep it alive
    exitWhenDone({ graceMs: LINGER_MS, code });
  },
  (err: unknown) => {
    process.stderr.write(`sandtrail: ${String(err)}\n`);
    process.exitCode = 1;
  },
);
