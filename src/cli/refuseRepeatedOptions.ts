import type { EventEmitter } from 'node:events';
import type { Command } from 'commander';
import { collect } from './context.js';

/**
 * Makes a single-value option given twice with two values a usage error (commander keeps the last
 * one silently: `--behash a --behash b` would search b alone). Repeatable options (parsed by
 * `collect`) and hidden twins (which feed their flag's own event, counted there) are left alone;
 * the same value twice is accepted.
 */
export function refuseRepeatedOptions(cmd: Command): void {
  const given = new Map<string, string>();
  for (const opt of cmd.options) {
    if (!(opt.required || opt.optional) || opt.variadic || opt.hidden || opt.parseArg === collect) continue;
    // a Command is an EventEmitter, which its typings leave out: commander applies an option on 'option:<name>'
    (cmd as unknown as EventEmitter).on(`option:${opt.name()}`, (value: unknown) => {
      const text = String(value);
      const before = given.get(opt.name());
      if (before !== undefined && before !== text) {
        cmd.error(`error: option '${opt.flags}' given twice ('${before}', then '${text}'): it takes one value`, {
          exitCode: 2,
          code: 'sandtrail.repeatedOption',
        });
      }
      given.set(opt.name(), text);
    });
  }
}
