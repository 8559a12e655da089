import { main } from './main.js';

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
