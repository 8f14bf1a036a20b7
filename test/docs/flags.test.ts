/**
 * The command pages and `--help` in step: every long flag a command's help prints is in its
 * page's option tables, and every flag any page names exists where the page says it does.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../cli/run-cli.js';
import {
  COMMANDS,
  type CommandName,
  flagMentions,
  helpFlags,
  markdownFiles,
  readDoc,
  section,
  tableFlags,
} from './markdown.js';

/** Each command's page, and the part of it that documents the command when a page holds two. */
const PAGES: Record<CommandName, { page: string; section?: string }> = {
  render: { page: 'docs/commands/render.md' },
  inspect: { page: 'docs/commands/inspect.md' },
  check: { page: 'docs/commands/check.md' },
  serve: { page: 'docs/commands/serve.md' },
  worker: { page: 'docs/commands/worker.md' },
  'queue status': { page: 'docs/commands/queue.md', section: '`content-api queue status`' },
  'queue results': { page: 'docs/commands/queue.md', section: '`content-api queue results`' },
  schema: { page: 'docs/commands/schema.md' },
};

/** Flags of other programs that the documentation names, each with the reason. Keep it short. */
const OTHER_TOOLS: Record<string, string> = {
  '--experimental-wasm-relaxed-simd': "V8's, which the metric turns on in Node 20 (docs/performance.md)",
  '--jitless': "node's, under which --quality auto still scores, in interpreted TypeScript (docs/quality.md)",
  '--max-old-space-size': "node's, which the metric's threads do not take as an option of theirs (docs/quality.md)",
  '--max-semi-space-size': "node's, tried for the test suite's workers (docs/performance.md)",
  '--openssl-legacy-provider': "the Node option the tests start s3rver with (docs/development.md), not content-api's",
  '--save-dev': "npm's, installing content-api's tarball into a site's repository (README.md, guides/ci.md)",
};

const help = new Map<CommandName | 'global', string[]>();

beforeAll(async () => {
  const run = async (args: string[]) => {
    const result = await runCli([...args, '--help']);
    expect(result.code, `content-api ${args.join(' ')} --help: ${result.stderr}`).toBe(0);
    return helpFlags(result.stdout);
  };
  // One after another: each runs in this process (runCli), where commands at once would be a process each.
  help.set('global', await run([]));
  for (const command of COMMANDS) help.set(command, await run(command.split(' ')));
});

const flagsOf = (command: CommandName | 'global') => new Set(help.get(command));
const pageCommands = (file: string) => COMMANDS.filter((command) => PAGES[command].page === file);

/** The commands a `--help` lists (the `Commands:` section), but for `help` itself. */
function listedCommands(helpText: string): string[] {
  const commands = helpText.split('\nCommands:\n')[1]?.split('\n\n')[0] ?? '';
  return [...commands.matchAll(/^ {2}(\S+)/gm)].map((match) => match[1]!).filter((name) => name !== 'help');
}

describe('docs/commands/*.md and --help', () => {
  it('knows every command of the program, subcommands included', async () => {
    const all: string[] = [];
    for (const name of listedCommands((await runCli(['--help'])).stdout)) {
      const subcommands = listedCommands((await runCli([name, '--help'])).stdout);
      all.push(...(subcommands.length > 0 ? subcommands.map((sub) => `${name} ${sub}`) : [name]));
    }
    expect(all.sort()).toEqual([...COMMANDS].sort());
  });

  it('parses a flag from every option line of --help, --no- forms included', () => {
    expect(flagsOf('render')).toContain('--no-download');
    expect(flagsOf('queue results')).toContain('--no-wait');
    expect(flagsOf('check')).toContain('--verify-files');
    expect(flagsOf('global')).toEqual(new Set(['--version', '--debug', '--help']));
    for (const command of COMMANDS) expect(flagsOf(command), command).toContain('--help');
  });

  it.each(COMMANDS)("every flag of '%s --help' is in the option tables of its page", (command) => {
    const { page, section: title } = PAGES[command];
    const text = readDoc(page);
    const documented = tableFlags(title ? section(text, title) : text);
    const missing = [...flagsOf(command)].filter((flag) => !documented.has(flag));
    expect(missing, `flags of '${command} --help' missing from the tables of ${page}`).toEqual([]);
  });

  it.each([...new Set(Object.values(PAGES).map((p) => p.page))])(
    'every flag %s names exists in the help of the command it is for',
    (page) => {
      const own = pageCommands(page);
      const wrong = flagMentions(readDoc(page))
        .filter(({ flag, command }) => {
          const commands = command ? [command] : own;
          return !commands.some((c) => flagsOf(c).has(flag)) && !flagsOf('global').has(flag);
        })
        .map(({ flag, command, where }) => `${flag} (for ${command ?? own.join(', ')}) in: ${where}`);
      expect(wrong, `flags in ${page} that the command does not have`).toEqual([]);
    },
  );
});

describe('every other page', () => {
  const others = markdownFiles().filter(
    (file) => !file.startsWith('docs/commands/') && file !== 'docs/spec/content-api-spec.md',
  );

  it.each(others)('every flag %s names exists in some command, or is another tool’s with a reason', (file) => {
    const known = new Set([...help.values()].flat());
    const wrong = flagMentions(readDoc(file))
      .filter(({ flag, command }) => (command ? !flagsOf(command).has(flag) : !known.has(flag)))
      .filter(({ flag }) => !(flag in OTHER_TOOLS))
      .map(({ flag, command, where }) => `${flag}${command ? ` (for ${command})` : ''} in: ${where}`);
    expect(wrong, `flags in ${file} that no command has`).toEqual([]);
  });

  it('names each flag of the allowlist somewhere (no stale entries)', () => {
    const named = new Set(others.flatMap((file) => flagMentions(readDoc(file)).map((m) => m.flag)));
    expect(Object.keys(OTHER_TOOLS).filter((flag) => !named.has(flag))).toEqual([]);
  });
});
