/**
 * Numbers for people, in reports and messages: counts and byte sizes.
 */

/** A whole number as text, or `?` for anything else (a report read back from JSON may hold anything). */
export const count = (value: unknown): string => (Number.isFinite(value) ? String(Math.round(Number(value))) : '?');

/** Bytes for people: `812 B`, `22.5 kB`, `1.1 MB` (SI units, as file managers show them). */
export function formatBytes(bytes: number): string {
  if (bytes < 1000) return `${count(bytes)} B`;
  const units = ['kB', 'MB', 'GB', 'TB'];
  let value = bytes / 1000;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit++;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}
