/**
 * Flag value parsers for commander: each names the flag and the bad value in its error.
 */
import { InvalidArgumentError } from 'commander';

/** A flag's value as given when `valid` accepts it; else `Expected <expected> for <flag> but got '<value>'.` */
export function checkedBy(flag: string, expected: string, valid: (value: string) => boolean, hint?: string) {
  return (value: string): string => {
    if (!valid(value))
      throw new InvalidArgumentError(`Expected ${expected} for ${flag} but got '${value}'${hint ? ` (${hint})` : ''}.`);
    return value;
  };
}

export function integerIn(flag: string, min: number, max = Number.MAX_SAFE_INTEGER) {
  return (value: string): number => {
    const number = Number(value);
    if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(number) || number < min || number > max) {
      const range =
        max === Number.MAX_SAFE_INTEGER
          ? min === 1
            ? 'a positive integer'
            : `an integer >= ${min}`
          : `an integer from ${min} to ${max}`;
      throw new InvalidArgumentError(`Expected ${range} for ${flag} but got '${value}'.`);
    }
    return number;
  };
}

/** `value` as an absolute http(s) URL, or null. */
function httpUrlOf(value: string): URL | null {
  const url = URL.canParse(value) ? new URL(value) : null;
  return url && (url.protocol === 'http:' || url.protocol === 'https:') ? url : null;
}

/** An absolute http(s) URL. */
export function httpUrl(flag: string) {
  return (value: string): string => {
    if (!httpUrlOf(value))
      throw new InvalidArgumentError(
        `Expected an absolute http(s) URL such as https://gallery.example.org for ${flag} but got '${value}'.`,
      );
    return value;
  };
}

/** A repeatable flag of http(s) origins (`https://cdn.example.org`, or any URL on it), commas allowed. */
export function originsFor(flag: string) {
  return (value: string, previous: string[] = []): string[] => {
    const origins = value
      .split(',')
      .filter((part) => part.trim() !== '')
      .map((part) => {
        const url = httpUrlOf(part.trim());
        if (!url)
          throw new InvalidArgumentError(
            `Expected an http(s) origin such as https://cdn.example.org for ${flag} but got '${part}'.`,
          );
        return url.origin;
      });
    return [...previous, ...origins];
  };
}
