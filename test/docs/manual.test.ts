import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { test } from 'vitest';
import { buildProgram } from '../../src/cli/index.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const README = join(ROOT, 'README.md');
const DOCS = join(ROOT, 'docs');
const pages = (): string[] => [
  README,
  ...readdirSync(DOCS)
    .filter((f) => f.endsWith('.md'))
    .map((f) => join(DOCS, f)),
];
const read = (file: string): string => readFileSync(file, 'utf8');

/** Markdown without its fenced code blocks (a link-like text inside one is not a link). */
const prose = (text: string): string => text.replace(/^```[\s\S]*?^```/gm, '');

/** Relative links of a page: [text](target), external ones and bare anchors of other schemes left out. */
function linksOf(text: string): string[] {
  return [...prose(text).matchAll(/\[[^\]]*\]\(([^)\s]+)\)/g)].map((m) => m[1] as string).filter((t) => !/^[a-z]+:/i.test(t));
}

/** The anchors GitHub gives a page's headings: lower-case, punctuation dropped, spaces as dashes, repeats numbered. */
function anchorsOf(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const m of prose(text).matchAll(/^#{1,6} (.+)$/gm)) {
    const base = (m[1] as string)
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N} _-]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

test('every relative link of the README and of docs/ resolves: the file exists, and the heading when one is named', () => {
  const broken: string[] = [];
  for (const page of pages()) {
    for (const link of linksOf(read(page))) {
      const [path, anchor] = link.split('#') as [string, string | undefined];
      const target = path === '' ? page : resolve(dirname(page), decodeURIComponent(path));
      const where = `${relative(ROOT, page)} → ${link}`;
      if (!existsSync(target)) broken.push(`${where}: no such file`);
      else if (anchor && target.endsWith('.md') && !anchorsOf(read(target)).has(anchor)) broken.push(`${where}: no such heading`);
    }
  }
  assert.deepEqual(broken, []);
});

test('the README links every page of docs/, and stays one screen', () => {
  const readme = read(README);
  const linked = new Set(
    linksOf(readme)
      .map((l) => l.split('#')[0] as string)
      .filter((l) => l.startsWith('docs/')),
  );
  assert.ok(linked.size > 0);
  const pagesOfDocs = readdirSync(DOCS).filter((f) => f.endsWith('.md'));
  for (const f of pagesOfDocs) assert.ok(linked.has(`docs/${f}`), `README links docs/${f}`);
  assert.ok(readme.split('\n').length <= 130, `README has ${readme.split('\n').length} lines`);
  assert.match(readme, /`npm test` is the test command/);
  assert.match(readme, /npm run demo/);
});

/** Every command of the CLI that does something (the leaves: `dlq purge`, not `dlq`), by its full name. */
function cliCommands(): Map<string, Command> {
  const out = new Map<string, Command>();
  const walk = (cmd: Command, path: string[]): void => {
    for (const c of cmd.commands) {
      const p = [...path, c.name()];
      if (c.commands.length === 0) out.set(p.join(' '), c);
      else walk(c, p);
    }
  };
  walk(
    buildProgram({}, () => undefined),
    [],
  );
  return out;
}

/**
 * The commands a page's tables name in their first column (`sandtrail dlq purge [--yes]` → `dlq purge`):
 * the longest run of the words after `sandtrail` that is a command of the CLI, or the first word
 * when none is (so a command the CLI lacks is reported by its name).
 */
function documentedCommands(text: string, known: Map<string, Command>): string[] {
  const groups = new Set([...known.keys()].flatMap((k) => k.split(' ').map((_, i, a) => a.slice(0, i + 1).join(' '))));
  const out: string[] = [];
  for (const row of prose(text).split('\n')) {
    if (!row.startsWith('| ')) continue;
    const first = row.slice(2).split(' | ')[0] as string;
    for (const m of first.matchAll(/`sandtrail ([^`]+)`/g)) {
      const words = (m[1] as string).split(/\s+/);
      let name = words[0] as string;
      for (let i = 1; i <= words.length; i++) {
        const candidate = words.slice(0, i).join(' ');
        if (groups.has(candidate)) name = candidate;
        else break;
      }
      out.push(name);
    }
  }
  return out;
}

test('docs/commands.md lists every command of the CLI, and only those', () => {
  const cli = cliCommands();
  const documented = documentedCommands(read(join(DOCS, 'commands.md')), cli);
  const unknown = documented.filter((c) => !cli.has(c));
  const missing = [...cli.keys()].filter((c) => !documented.includes(c));
  assert.deepEqual(unknown, [], `docs/commands.md names commands the CLI does not have: ${unknown.join(', ')}`);
  assert.deepEqual(missing, [], `commands missing from docs/commands.md: ${missing.join(', ')}`);
});

test("the README's commands are commands of the CLI", () => {
  const cli = cliCommands();
  const documented = documentedCommands(read(README), cli);
  assert.ok(documented.length >= 10, `${documented.length} commands in the README's table`);
  const unknown = documented.filter((c) => !cli.has(c));
  assert.deepEqual(unknown, [], `the README names commands the CLI does not have: ${unknown.join(', ')}`);
});
