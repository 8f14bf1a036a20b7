/**
 * The tests' launcher (test/fixtures/launcher.js): the children it starts behave as child_process's
 * do, for what the tests use of them.
 */
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { execFile, spawn } from './fixtures/launcher.js';
import { tempDir } from './fixtures/tmp.js';

describe('the launcher', () => {
  it('runs a program with its arguments, standard input, working folder and environment', async () => {
    const dir = await tempDir();
    const script =
      'process.stdout.write(process.cwd() + " " + process.env.PROBE + " " + require("fs").readFileSync(0))';
    const run = await execFile(process.execPath, ['-e', script], {
      cwd: dir,
      env: { ...process.env, PROBE: 'set' },
      input: 'from stdin',
    });
    expect(run).toEqual({ stdout: `${dir} set from stdin`, stderr: '' });
  });

  it('rejects a failed program with its exit code and output', async () => {
    const failed = execFile('sh', ['-c', 'echo out; echo err >&2; exit 3']);
    await expect(failed).rejects.toMatchObject({ code: 3, signal: null, stdout: 'out\n', stderr: 'err\n' });
  });

  it('a program not found: error, then close with its number, as child_process', async () => {
    const child = spawn('content-api-no-such-program', []);
    // Not events.once, which rejects on the error that comes first.
    const closed = new Promise((resolve) => child.on('close', (...args) => resolve(args)));
    const [error] = await once(child, 'error');
    expect(error).toMatchObject({ code: 'ENOENT', syscall: 'spawn content-api-no-such-program', errno: -2 });
    expect(await closed).toEqual([-2, null]);
  });

  it('hands over the pipes whole: 5 MB of standard output, then standard error', async () => {
    const child = spawn(process.execPath, ['-e', 'process.stdout.write("x".repeat(5e6)); process.stderr.write("end")']);
    let bytes = 0;
    let stderr = '';
    child.stdout!.on('data', (chunk: Buffer) => (bytes += chunk.length));
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    expect(await once(child, 'close')).toEqual([0, null]);
    expect({ bytes, stderr }).toEqual({ bytes: 5e6, stderr: 'end' });
  });

  it('kills: before the process id is known, and a process group by its id', async () => {
    const early = spawn('sleep', ['30']);
    expect(early.kill('SIGTERM')).toBe(true);
    expect(await once(early, 'close')).toEqual([null, 'SIGTERM']);

    const group = spawn('sh', ['-c', 'sleep 30 & sleep 30'], { detached: true, stdio: 'ignore' });
    await once(group, 'spawn');
    process.kill(-group.pid!, 'SIGKILL');
    expect(await once(group, 'exit')).toEqual([null, 'SIGKILL']);
  });

  it("relays a Node child's IPC messages both ways, in order", async () => {
    const script = 'process.on("message", (m) => { process.send(m + 1); process.send(m + 2); process.disconnect(); })';
    const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const messages: unknown[] = [];
    child.on('message', (message) => messages.push(message));
    child.send(40);
    await once(child, 'exit');
    expect(messages).toEqual([41, 42]);
  });

  it('writes standard output to a file, or says why it cannot', async () => {
    const file = path.join(await tempDir(), 'out.txt');
    const written = spawn('echo', ['to a file'], { stdio: ['ignore', { file }, 'ignore'] });
    expect(await once(written, 'close')).toEqual([0, null]);
    expect(await readFile(file, 'utf8')).toBe('to a file\n');

    const refused = spawn('echo', ['x'], { stdio: ['ignore', { file: '/nonexistent/out.txt' }, 'ignore'] });
    const [error] = await once(refused, 'error');
    expect(error).toMatchObject({ code: 'ENOENT', message: expect.stringContaining('/nonexistent/out.txt') });
  });
});
