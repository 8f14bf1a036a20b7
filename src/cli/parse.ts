/**
 * Flag value parsers for commander: each names the flag and the bad value in its error.
 */
import { InvalidArgumentError } from 'commander';

export function integerIn(flag: string, min: number, max = Number.MAX_SAFE_INTEGER) {
  return (value: string): number => {
    const number = Number(value);
    if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(number) || number < min || number > max) {
      const range = max === Number.MAX_SAFE_INTEGER ? (min === 1 ? 'a positive integer' : `an integer >= ${min}`) : `an integer from ${min} to ${max}`;
      throw new InvalidArgumentError(`Expected ${range} for ${flag} but got '${value}'.`);
    }
    return number;
  };
}
