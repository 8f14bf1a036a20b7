/**
 * How text is marked up for a terminal. The CLI makes ANSI styles for a terminal that wants
 * colour (cli/output.ts); reports written anywhere else get `PLAIN_STYLES`.
 */
export interface Styles {
  red(text: string): string;
  yellow(text: string): string;
  green(text: string): string;
  dim(text: string): string;
  bold(text: string): string;
}

const same = (text: string) => text;

/** No markup at all. */
export const PLAIN_STYLES: Styles = { red: same, yellow: same, green: same, dim: same, bold: same };
