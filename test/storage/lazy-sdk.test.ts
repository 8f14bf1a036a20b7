/**
 * The AWS SDK is loaded only for s3:// locations: `render --help` and a local render never
 * load it (seen from Node's own module cache at exit, in the built binary).
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN } from '../cli/run-cli.js';
import { photo, writeImage } from '../fixtures/images.js';
import { spawn } from '../fixtures/launcher.js';
import { tempDir } from '../fixtures/tmp.js';

/** Prints, at exit, how many modules from @aws-sdk the process had loaded. */
const REPORT =
  `data:text/javascript,import{createRequire}from'node:module';const r=createRequire(process.cwd()+'/');` +
  `process.on('exit',()=>process.stderr.write('aws-sdk modules: '+` +
  `Object.keys(r('module')._cache).filter((k)=>k.includes('@aws-sdk')).length+'\\n'))`;

function run(args: string[]): Promise<string> {
  const child = spawn(process.execPath, ['--import', REPORT, BIN, ...args], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, NO_COLOR: '1' },
  });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve) => child.on('close', () => resolve(stderr)));
}

describe('the AWS SDK loads lazily', () => {
  it('not for render --help, nor for a local render', async () => {
    expect(await run(['render', '--help'])).toMatch(/aws-sdk modules: 0\n/);
    const dir = await tempDir();
    await writeImage(dir, 'a.jpg', photo(400, 300).jpeg());
    expect(await run(['render', path.join(dir, 'a.jpg'), '--out', path.join(dir, 'media')])).toMatch(
      /aws-sdk modules: 0\n/,
    );
  });

  it('but for an s3:// location (the check above can see it)', async () => {
    const stderr = await run([
      'render',
      'samples/originals',
      '--out',
      's3://bucket/media/',
      '--dry-run',
      '--s3-endpoint',
      'http://127.0.0.1:9',
    ]);
    expect(stderr).toMatch(/aws-sdk modules: [1-9]\d*\n/);
  });
});
