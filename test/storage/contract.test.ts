/**
 * One contract, every driver: the local folder and an S3 bucket (a real s3rver on loopback)
 * must behave the same for everything render, check and the manifest ask of a store.
 */
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalStore } from '../../src/storage/local.js';
import { openStore } from '../../src/storage/location.js';
import type { MediaStore } from '../../src/storage/store.js';
import { applyEnv, startS3, type TestS3 } from '../fixtures/s3.js';

let s3: TestS3;
let prefixes = 0;
const folders: string[] = [];
beforeAll(async () => {
  s3 = await startS3(['contract']);
  applyEnv(s3.env);
});
afterAll(async () => {
  await s3.close();
  await Promise.all(folders.map((folder) => rm(folder, { recursive: true, force: true })));
});

const drivers: Array<[string, () => Promise<MediaStore>]> = [
  [
    'local folder',
    async () => new LocalStore(folders[folders.push(await mkdtemp(path.join(tmpdir(), 'store-'))) - 1]!),
  ],
  ['S3 bucket', () => openStore(`s3://contract/run-${++prefixes}/media`)],
];

async function collect(store: MediaStore, prefix?: string): Promise<string[]> {
  const keys: string[] = [];
  for await (const found of store.list(prefix)) keys.push(found.key);
  return keys;
}

async function text(store: MediaStore, key: string): Promise<string> {
  const { body } = await store.read(key);
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

describe.each(drivers)('%s', (_name, make) => {
  let store: MediaStore;
  beforeAll(async () => {
    store = await make();
    await store.open({ write: true, create: true });
  });
  afterAll(() => store.close());

  it('writes an object that reads back whole, with its size and a stamp', async () => {
    await store.put('a/b/one.jpg', Buffer.from('hello, world'), { contentType: 'image/jpeg' });
    expect(await text(store, 'a/b/one.jpg')).toBe('hello, world');
    const found = await store.stat('a/b/one.jpg');
    expect(found).toMatchObject({ key: 'a/b/one.jpg', size: 12 });
    expect(found!.stamp.size).toBe(12);
    expect((await store.readHead('a/b/one.jpg', 5))!.toString()).toBe('hello');
    expect((await store.readHead('a/b/one.jpg', 100))!.toString()).toBe('hello, world');
  });

  it('says null for what is not there', async () => {
    expect(await store.stat('a/missing.jpg')).toBeNull();
    expect(await store.readHead('a/missing.jpg', 10)).toBeNull();
    await expect(store.remove('a/missing.jpg')).resolves.toBeUndefined();
  });

  it('shows a staged object only once committed, and never when discarded', async () => {
    const staged = await store.stage('s/kept.png', Buffer.from('kept'));
    const dropped = await store.stage('s/dropped.png', Buffer.from('dropped'));
    expect(await store.stat('s/kept.png')).toBeNull();
    await staged.commit();
    await dropped.discard();
    expect(await store.stat('s/kept.png')).toMatchObject({ size: 4 });
    expect(await store.stat('s/dropped.png')).toBeNull();
    expect(await collect(store, 's/')).toEqual(['s/kept.png']);
  });

  it('lists every object below a prefix, recursively, in key order', async () => {
    for (const key of ['l/z.jpg', 'l/a/deep/x.jpg', 'l/m.jpg', 'other/n.jpg']) await store.put(key, Buffer.from(key));
    expect(await collect(store, 'l/')).toEqual(['l/a/deep/x.jpg', 'l/m.jpg', 'l/z.jpg']);
    const shallow: string[] = [];
    for await (const found of store.list('l/', { shallow: true })) shallow.push(found.key);
    expect(shallow).toEqual(['l/m.jpg', 'l/z.jpg']);
    expect(await collect(store)).toEqual(expect.arrayContaining(['l/m.jpg', 'other/n.jpg', 'a/b/one.jpg']));
  });

  it('replaces an object with a new stamp, and removes it', async () => {
    await store.put('r/x.jpg', Buffer.from('first'));
    const before = (await store.stat('r/x.jpg'))!.stamp;
    // Bytes of another length: the stamp must move whatever the clock does (no wait for a coarse one to tick).
    await store.put('r/x.jpg', Buffer.from('second!'));
    const after = await store.stat('r/x.jpg');
    expect(after!.size).toBe(7);
    expect(after!.stamp).not.toEqual(before);
    await store.remove('r/x.jpg');
    expect(await store.stat('r/x.jpg')).toBeNull();
  });

  it('refuses keys that are absolute, empty or climb out, for every operation', async () => {
    for (const key of ['../escape.jpg', '/abs.jpg', 'a//b.jpg', 'a/./b.jpg', '']) {
      await expect(store.put(key, Buffer.from('x'))).rejects.toThrow(/is not a path below it/);
      await expect(store.stage(key, Buffer.from('x'))).rejects.toThrow(/is not a path below it/);
      await expect(store.stat(key)).rejects.toThrow(/is not a path below it/);
      await expect(store.remove(key)).rejects.toThrow(/is not a path below it/);
      await expect(store.read(key)).rejects.toThrow(/is not a path below it/);
    }
  });

  it('describes objects by the location the user gave', () => {
    expect(store.describe('a/b.jpg')).toMatch(/^(s3:\/\/contract\/run-\d+\/media\/|\/).*a\/b\.jpg$/);
  });
});

describe('S3 bucket', () => {
  it('gives renditions the Content-Type and Cache-Control serve sends', async () => {
    const store = await openStore('s3://contract/headers/');
    await store.put('x.webp', Buffer.from('RIFF'), {
      contentType: 'image/webp',
      cacheControl: 'public, max-age=31536000, immutable',
    });
    await store.close();
    expect(await s3.head('contract', 'headers/x.webp')).toMatchObject({
      contentType: 'image/webp',
      cacheControl: 'public, max-age=31536000, immutable',
    });
  });
});

describe('the test S3 server (test/fixtures/s3rver-process.js)', () => {
  it('goes on after a client dies mid-upload: the puts and deletes after it are answered', async () => {
    // A put that promised 1,000 bytes, sent 10, and lost its connection, as a render killed mid-upload.
    const { port } = new URL(s3.endpoint);
    const socket = net.connect(Number(port), '127.0.0.1');
    await once(socket, 'connect');
    socket.write('PUT /contract/cut/short.jpg HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000\r\n\r\n0123456789');
    while (!s3.requests.includes('PUT /contract/cut/short.jpg')) await s3.sync();
    socket.destroy();
    await s3.put('contract', 'cut/after.jpg', Buffer.from('whole'));
    await s3.remove('contract', 'cut/after.jpg');
    await s3.put('contract', 'cut/again.jpg', Buffer.from('whole'));
    expect((await s3.objects('contract', 'cut/')).get('cut/again.jpg')).toBe(5);
  }, 10_000);
});
