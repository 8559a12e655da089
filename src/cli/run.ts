import { main } from './main.js';

// A closed pipe (`sandtrail query ... | head`) is a normal way for a reader to stop.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0);
  throw err;
});

// Set the code and let the event loop end, so buffered stdout/stderr are flushed.
main(process.argv, process.env).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`sandtrail: ${String(err)}\n`);
    process.exitCode = 1;
  },
);
