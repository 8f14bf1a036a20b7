/**
 * serve on faulty content folders: every fault is a listed problem (file and reason), exit
 * 2, no stack trace, no hang: a FIFO named as a record (a folder so named is walked), a record that is null,
 * one nested 200,000 levels deep, one not UTF-8, one past the size cap (sparse), two files
 * for one page, a symlink to a file outside the folder, a symlink loop among the folders.
 */
import { cp, mkdir, symlink, truncate, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { MAX_RECORD_BYTES } from '../../src/server/content.js';
import { runCli } from '../cli/run-cli.js';
import { mkfifo } from '../fixtures/launcher.js';
import { tempDir } from '../fixtures/tmp.js';
import { PAGES } from '../page/variants.js';

const CONTENT = path.resolve(PAGES, '../content');

describe('serve: faulty content folders give listed problems and exit 2', () => {
  it('every fault at once, each named, in bounded time', async () => {
    const dir = await tempDir();
    const content = path.join(dir, 'content');
    await cp(CONTENT, content, { recursive: true });
    const pages = path.join(content, 'pages');
    await mkfifo(path.join(pages, '300.json'));
    await mkdir(path.join(pages, '301.json'));
    await writeFile(path.join(pages, '302.json'), 'null');
    await writeFile(path.join(pages, '303.json'), `{"id": 303, "x": ${'['.repeat(200_000)}${']'.repeat(200_000)}}`);
    await writeFile(path.join(pages, '304.json'), Buffer.from([0x7b, 0x22, 0x74, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]));
    await writeFile(path.join(pages, '305.json'), '');
    await truncate(path.join(pages, '305.json'), MAX_RECORD_BYTES + 1);
    await cp(path.join(pages, '101.json'), path.join(pages, '0101.json'));
    await writeFile(path.join(dir, 'secret.json'), '{"id": 306}');
    await symlink(path.join(dir, 'secret.json'), path.join(pages, '306.json'));
    await symlink('..', path.join(content, 'gallery', 'loop'));

    const started = Date.now();
    const result = await runCli(['serve', '--content', content, '--port', '0']);
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(result.code).toBe(2);
    expect(result.stderr).not.toMatch(/\n\s+at /); // no stack trace
    const at = (name: string) => path.join(pages, name).replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
    expect(result.stderr).toMatch(new RegExp(`${at('300.json')}: a FIFO \\(named pipe\\), not a file\\n`));
    // a folder, walked as one (it used to be read: EISDIR, a stack trace)
    expect(result.stderr).not.toContain('301.json');
    expect(result.stderr).toMatch(
      new RegExp(`${at('302.json')}: \\$: is null, not a record \\(a JSON object\\) \\[layout\\]\\n`),
    );
    expect(result.stderr).toMatch(
      new RegExp(`${at('303.json')}: not JSON \\(nested deeper than 256 levels \\(the limit\\) at offset \\d+\\)\\n`),
    );
    expect(result.stderr).toMatch(
      new RegExp(`${at('304.json')}: not UTF-8: byte 0xff at offset 6 is not valid UTF-8\\n`),
    );
    expect(result.stderr).toMatch(
      new RegExp(`${at('305.json')}: larger than ${MAX_RECORD_BYTES} bytes, the cap on a record\\n`),
    );
    expect(result.stderr).toMatch(new RegExp(`${at('101.json')}: page 101 is also ${at('0101.json')} \\[layout\\]\\n`));
    expect(result.stderr).toMatch(
      new RegExp(`${at('306.json')}: a symlink to a file outside the content folder; not read\\n`),
    );
    expect(result.stderr).toMatch(/problem\(s\) in the content folder\n/);
  });
});
