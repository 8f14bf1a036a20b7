/**
 * Just enough Markdown for the documentation tests: fenced blocks, headings and their GitHub
 * anchors, links, code spans, and the `--flag` tokens a page names (with the command each
 * one is for, when the text says).
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** README.md and every Markdown file under docs/, as paths relative to the repository. */
export function markdownFiles(): string[] {
  const found: string[] = ['README.md'];
  const walk = (dir: string) => {
    for (const entry of readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
      const relative = path.posix.join(dir, entry.name);
      if (entry.isDirectory()) walk(relative);
      else if (entry.name.endsWith('.md')) found.push(relative);
    }
  };
  walk('docs');
  return found.sort();
}

export const readDoc = (file: string): string => readFileSync(path.join(ROOT, file), 'utf8');

export interface Fence {
  lang: string;
  lines: string[];
}

/** The fenced code blocks of a document, in order. */
export function fences(text: string): Fence[] {
  const blocks: Fence[] = [];
  let open: Fence | undefined;
  for (const line of text.split('\n')) {
    const marker = /^```(\S*)/.exec(line);
    if (open) {
      if (line.startsWith('```')) {
        blocks.push(open);
        open = undefined;
      } else open.lines.push(line);
    } else if (marker) open = { lang: marker[1] ?? '', lines: [] };
  }
  return blocks;
}

/** The text outside fenced code blocks (each fenced line blanked, so line numbers hold). */
export function prose(text: string): string {
  let inFence = false;
  return text
    .split('\n')
    .map((line) => {
      if (line.startsWith('```')) {
        inFence = !inFence;
        return '';
      }
      return inFence ? '' : line;
    })
    .join('\n');
}

/** The lines inside fenced code blocks. */
export const codeLines = (text: string): string[] => fences(text).flatMap((fence) => fence.lines);

/** Inline code spans of the prose (a span may cross a line break, as in Markdown). */
export const codeSpans = (text: string): string[] => [...prose(text).matchAll(/`([^`]+)`/g)].map((m) => m[1] ?? '');

/** The prose with its code spans removed. */
export const plainProse = (text: string): string => prose(text).replace(/`[^`]+`/g, '');

/**
 * GitHub's anchor for a heading: its text as rendered (code spans and links reduced to their
 * text), lower-cased, every character but letters, digits, `-`, `_` and spaces removed, spaces
 * to `-`; a repeated anchor gets `-1`, `-2`, ...
 */
export function slug(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/`/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor the headings of a document make. */
export function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  for (const line of prose(text).split('\n')) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const base = slug(heading[1] ?? '');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    result.add(count === 0 ? base : `${base}-${count}`);
  }
  return result;
}

/** The headings of a document, as written. */
export const headings = (text: string): string[] =>
  [...prose(text).matchAll(/^#{1,6}\s+(.*?)\s*#*\s*$/gm)].map((m) => m[1] ?? '');

/** Every inline link target of the prose (not images, not inside code). */
export function links(text: string): string[] {
  return [...plainProse(text).matchAll(/(?<!!)\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1] ?? '');
}

/** The commands, as `content-api <command>` names them. */
export const COMMANDS = [
  'render',
  'inspect',
  'check',
  'serve',
  'worker',
  'queue status',
  'queue results',
  'schema',
] as const;
export type CommandName = (typeof COMMANDS)[number];

const FLAG = /(?<![\w-])--[a-z][a-z0-9-]*/g;
const NAMED_COMMAND = new RegExp(
  `(?:^|content-api\\s+)(${COMMANDS.map((c) => c.replace(' ', '\\s+')).join('|')})\\b`,
  'g',
);

export interface FlagMention {
  flag: string;
  /** The command the text names the flag for (`render --queue`, `content-api worker ... --quiet`), if any. */
  command: CommandName | undefined;
  where: string;
}

/** The command a stretch of text names last before `index`: `content-api <command>`, or `<command>` leading a span. */
function commandBefore(text: string, index: number): CommandName | undefined {
  let found: CommandName | undefined;
  for (const match of text.slice(0, index).matchAll(NAMED_COMMAND))
    found = (match[1] ?? '').replace(/\s+/g, ' ') as CommandName;
  return found;
}

/**
 * Every `--flag` a document names. In a code line or code span that names a command before the
 * flag (`content-api check ... --reporter`, `` `render --page` ``), the flag is that command's;
 * elsewhere (prose, spans and lines without a command) it is the page's own.
 */
export function flagMentions(text: string): FlagMention[] {
  const mentions: FlagMention[] = [];
  const scan = (piece: string, withCommands: boolean) => {
    for (const match of piece.matchAll(FLAG))
      mentions.push({
        flag: match[0],
        command: withCommands ? commandBefore(piece, match.index) : undefined,
        where: piece.trim().slice(0, 120),
      });
  };
  for (const line of codeLines(text)) scan(line, true);
  for (const span of codeSpans(text)) scan(span, true);
  scan(plainProse(text), false);
  return mentions;
}

/** The long flags in the first cell of each table row of a document (`| \`-o, --out <dir>\` | ...`). */
export function tableFlags(text: string): Set<string> {
  const flags = new Set<string>();
  for (const line of prose(text).split('\n')) {
    const cell = /^\|([^|]*(?:\\\|[^|]*)*)\|/.exec(line)?.[1];
    if (cell) for (const match of cell.matchAll(FLAG)) flags.add(match[0]);
  }
  return flags;
}

/** The part of a document from the heading whose text is `title` to the next heading of its level or above. */
export function section(text: string, title: string): string {
  const lines = text.split('\n');
  const start = lines.findIndex((line) => /^#{1,6}\s/.test(line) && line.replace(/^#+\s+/, '').trim() === title);
  if (start < 0) throw new Error(`no heading '${title}'`);
  const level = /^#+/.exec(lines[start] ?? '')?.[0].length ?? 1;
  let inFence = false;
  let end = lines.length;
  for (let i = start + 1; i < lines.length; i++) {
    const line = lines[i] ?? '';
    if (line.startsWith('```')) inFence = !inFence;
    const marks = /^(#+)\s/.exec(line)?.[1];
    if (!inFence && marks && marks.length <= level) {
      end = i;
      break;
    }
  }
  return lines.slice(start, end).join('\n');
}

/** The long flags of the options sections of a `--help` text (an option line starts with two spaces and a dash). */
export function helpFlags(help: string): string[] {
  const flags: string[] = [];
  for (const line of help.split('\n')) {
    const option = /^ {2}(?:-\w, )?(--[a-z][a-z0-9-]*)/.exec(line);
    if (option?.[1]) flags.push(option[1]);
  }
  return flags;
}
