import type { EventEmitter } from 'node:events';
import { Option, type Command } from 'commander';

/** Pivot flags also accepted in the stored kind's spelling (as `serve` and the documents write it). */
const STORED_SPELLING: Readonly<Record<string, string>> = {
  '--sigma-rule': '--sigma_rule_id',
  '--dropped-sha256': '--dropped_sha256',
};

/**
 * Adds a pivot flag (`--sigma-rule <id>`) to a command, with a hidden twin in the stored spelling
 * (`--sigma_rule_id <id>`) that feeds the same option: its value, parser and repetitions alike.
 */
export function addPivotOption(cmd: Command, flags: string, what: string, parse?: (v: string, prev: string[]) => string[]): Command {
  const long = flags.split(/[ ,|]+/).find((f) => f.startsWith('--')) ?? '';
  const twin = STORED_SPELLING[long];
  const option = new Option(flags, twin ? `${what} (also ${twin})` : what);
  if (parse) option.argParser(parse);
  cmd.addOption(option);
  if (twin) {
    const hidden = new Option(flags.replace(long, twin)).hideHelp();
    cmd.addOption(hidden);
    // commander applies an option on its 'option:<name>' event: the twin's value goes through the flag's own handler
    // (a Command is an EventEmitter, which its typings leave out)
    cmd.on(`option:${hidden.name()}`, (value: string) => (cmd as unknown as EventEmitter).emit(`option:${option.name()}`, value));
  }
  return cmd;
}
