/**
 * The second step of `npm run build`: tsc compiles src/ to dist/ but copies nothing else, and the
 * queue's Redis scripts (src/queue/commands/*.lua) are read beside the compiled module that runs
 * them (dist/queue/commands/). The folder is made anew, so a script removed from src/ goes too.
 */
import { copyFileSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const from = fileURLToPath(new URL('../src/queue/commands/', import.meta.url));
const to = fileURLToPath(new URL('../dist/queue/commands/', import.meta.url));

rmSync(to, { recursive: true, force: true });
mkdirSync(to, { recursive: true });
for (const file of readdirSync(from).filter((name) => name.endsWith('.lua'))) copyFileSync(from + file, to + file);
