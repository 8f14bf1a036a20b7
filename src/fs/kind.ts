/** What a file that is not a regular file is, for a message (`a FIFO (named pipe), not a file`). */
import type { Stats } from 'node:fs';

export function kindOf(info: Stats): string {
  if (info.isDirectory()) return 'a folder';
  if (info.isFIFO()) return 'a FIFO (named pipe)';
  if (info.isCharacterDevice() || info.isBlockDevice()) return 'a device';
  if (info.isSocket()) return 'a socket';
  return 'not a regular file';
}
