/**
 * The end of every command's help: real invocations, then what its exit codes mean.
 */

/** What 0, 1 and 2 mean for most commands (documented in the README). */
export const EXIT_CODES: Readonly<Record<number, string>> = {
  0: 'everything worked',
  1: 'the command ran, but some items failed or problems were found',
  2: 'the command could not run (bad flags, unwritable output folder, ...)',
};

/** `Examples:` with each invocation after `$ `, then `Exit codes:` (lines after the first indented). */
export function epilogue(examples: string[], exitCodes: Readonly<Record<number, string>> = EXIT_CODES): string {
  const codes = Object.entries(exitCodes).map(([code, meaning]) => `  ${code}  ${meaning.replaceAll('\n', '\n     ')}`);
  return `\nExamples:\n${examples.map((example) => `  $ ${example}`).join('\n')}\n\nExit codes:\n${codes.join('\n')}`;
}
