/**
 * `render --shard i/n`: static shards for batch systems without a broker. Each shard is a
 * normal render of its part; all shards together equal one render of the whole batch: the
 * same files, byte for byte, and the same manifest.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseShard, shardOf } from '../../src/renditions/shard.js';
import { photo, writeImage } from '../fixtures/images.js';
import { readEntries } from '../fixtures/manifest.js';
import { tempDir } from '../fixtures/tmp.js';
import { runCli } from './run-cli.js';

async function files(dir: string): Promise<Map<string, Buffer>> {
  const names = ((await readdir(dir, { recursive: true })) as string[])
    .filter((name) => /\.(jpg|png)$/.test(name))
    .sort();
  return new Map(await Promise.all(names.map(async (name) => [name, await readFile(path.join(dir, name))] as const)));
}

describe('content-api render --shard', () => {
  it(
    'shards 0/3, 1/3 and 2/3, run separately, equal one render of the whole batch: ' + 'same files, same manifest',
    async () => {
      const dir = await tempDir();
      const input = path.join(dir, 'in');
      for (let i = 0; i < 9; i++)
        await writeImage(
          input,
          `${i % 3 ? 'a' : 'b/deep'}/photo-${i}.${i % 4 ? 'jpg' : 'png'}`,
          i % 4 ? photo(500 + i, 400).jpeg() : photo(400, 300 + i).png(),
        );
      const whole = path.join(dir, 'whole');
      const sharded = path.join(dir, 'sharded');
      expect((await runCli(['render', input, '--out', whole])).code).toBe(0);
      const counts: number[] = [];
      for (let index = 0; index < 3; index++) {
        const run = await runCli(['render', input, '--out', sharded, '--shard', `${index}/3`, '--json']);
        expect(run.code).toBe(0);
        counts.push(JSON.parse(run.stdout).results.length);
      }
      expect(counts.reduce((a, b) => a + b)).toBe(9);
      expect(counts.filter((count) => count > 0).length).toBeGreaterThan(1); // a real partition, not all in one shard
      const [a, b] = [await files(whole), await files(sharded)];
      expect([...b.keys()]).toEqual([...a.keys()]);
      for (const [name, bytes] of a) expect(b.get(name)!.equals(bytes), name).toBe(true);
      // Byte for byte (sources are relative to the output folder; both sit beside the input), but
      // for the stamps: a file's stamp is recorded only once it is old enough not to be racily
      // clean, and the later runs may see the originals old enough where the first did not.
      const manifest = async (out: string) => {
        const entries = await readEntries(out);
        for (const entry of Object.values(entries)) delete entry.stamp;
        return entries;
      };
      expect(Object.keys(await manifest(whole))).toHaveLength(9);
      expect(await manifest(sharded)).toEqual(await manifest(whole));
    },
  );

  it('auto/n takes the index from JOB_COMPLETION_INDEX (Kubernetes) or AWS_BATCH_JOB_ARRAY_INDEX', () => {
    expect(parseShard('auto/16', { JOB_COMPLETION_INDEX: '3' })).toEqual({ index: 3, count: 16 });
    expect(parseShard('auto/16', { AWS_BATCH_JOB_ARRAY_INDEX: '15' })).toEqual({ index: 15, count: 16 });
    expect(parseShard('2/5')).toEqual({ index: 2, count: 5 });
  });

  it('refuses spaces around the flag and around the index from the environment alike, in one line each', () => {
    for (const value of [' 0/2', '0/2 ', '0/2\n', '\t1/2', ' auto/2']) {
      expect(() => parseShard(value, { JOB_COMPLETION_INDEX: '1' }), JSON.stringify(value)).toThrow(
        /^Expected i\/n \(0 <= i < n\) or auto\/n for --shard but got '.*' \(spaces around it are not allowed\)$/,
      );
    }
    for (const index of [' 1', '1 ', '1\n', '\u00a01']) {
      expect(() => parseShard('auto/2', { JOB_COMPLETION_INDEX: index }), JSON.stringify(index)).toThrow(
        /^--shard auto\/2: JOB_COMPLETION_INDEX is '.*', not an index \(spaces around it are not allowed\)$/,
      );
    }
    // What is shown is escaped: a line break in a value cannot make a second line.
    expect(() => parseShard('0/2\nforged')).toThrow("but got '0/2\\nforged'");
  });

  it('spreads names evenly: 16 shards of 4,000 names each hold 250 +- 25%', () => {
    const counts = new Array<number>(16).fill(0);
    for (let i = 0; i < 4_000; i++) counts[shardOf(`archive/${i % 40}/scan-${i}`, 16)]!++;
    for (const count of counts) expect(Math.abs(count - 250)).toBeLessThan(63);
  });

  it.each([
    [['--shard', '3/3'], {}, /--shard 3\/3: the index must be below 3/],
    [['--shard', 'x/3'], {}, /Expected i\/n \(0 <= i < n\) or auto\/n for --shard but got 'x\/3'/],
    [['--shard', ' 0/2'], {}, /for --shard but got ' 0\/2' \(spaces around it are not allowed\)/],
    [['--shard', 'auto/2'], { JOB_COMPLETION_INDEX: ' 1' }, /JOB_COMPLETION_INDEX is ' 1', not an index \(spaces/],
    [
      ['--shard', 'auto/4'],
      { JOB_COMPLETION_INDEX: undefined, AWS_BATCH_JOB_ARRAY_INDEX: undefined },
      /no shard index in the environment/,
    ],
  ] as const)('%j is exit 2 with one line', async (args, env, message) => {
    const result = await runCli(['render', 'samples/originals', '--out', path.join(await tempDir(), 'out'), ...args], {
      env,
    });
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(message);
  });
});
