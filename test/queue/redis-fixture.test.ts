/**
 * The Redis fixture itself: a server that answers, keeps its data across a restart, is gone once
 * stopped, and takes the options it is given. A missing redis-server fails this file at import
 * (fixtures/redis.ts): npm test installs it first.
 */

import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { type RedisServer, redisVersion, startRedis } from '../fixtures/redis.js';

/** A client that fails at once rather than retrying, and is closed after the test. */
const clients: Redis[] = [];
function client(server: RedisServer): Redis {
  const redis = new Redis(server.url, { maxRetriesPerRequest: 0, retryStrategy: () => null });
  clients.push(redis);
  return redis;
}

const servers: RedisServer[] = [];
async function start(options?: Parameters<typeof startRedis>[0]): Promise<RedisServer> {
  const server = await startRedis(options);
  servers.push(server);
  return server;
}

afterEach(async () => {
  for (const redis of clients.splice(0)) redis.disconnect();
  await Promise.all(servers.splice(0).map((server) => server.stop()));
});

/** The error code of a plain TCP connection to `port`, or 'connected'. */
function connect(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });
}

describe('the Redis fixture', () => {
  it('starts a server on loopback that answers PING', async () => {
    const server = await start();
    expect(server.url).toBe(`redis://127.0.0.1:${server.port}`);
    expect(await client(server).ping()).toBe('PONG');
  });

  it('keeps the data across restart() (append-only file, same port and folder)', async () => {
    const server = await start();
    const before = client(server);
    await before.set('k', 'v');
    before.disconnect();
    await server.restart(100);
    expect(await client(server).get('k')).toBe('v');
  });

  it('starts empty after restart() without persist', async () => {
    const server = await start({ persist: false });
    await client(server).set('k', 'v');
    await server.restart(0);
    expect(await client(server).get('k')).toBeNull();
  });

  it('comes back with start() after kill(), on the same port', async () => {
    const server = await start();
    await server.kill();
    expect(await connect(server.port)).toBe('ECONNREFUSED');
    expect(existsSync(server.dir)).toBe(true);
    await server.start();
    expect(await client(server).ping()).toBe('PONG');
  });

  it('is gone after stop(): connections refused, folder removed, a second stop() harmless', async () => {
    const server = await start();
    expect(await connect(server.port)).toBe('connected');
    await server.stop();
    expect(await connect(server.port)).toBe('ECONNREFUSED');
    expect(existsSync(server.dir)).toBe(false);
    await server.stop();
    await expect(server.start()).rejects.toThrow(/stopped/);
  });

  it('applies maxmemoryPolicy, noeviction by default', async () => {
    const [plain, lru] = await Promise.all([start(), start({ maxmemoryPolicy: 'allkeys-lru' })]);
    expect(await client(plain).config('GET', 'maxmemory-policy')).toEqual(['maxmemory-policy', 'noeviction']);
    expect(await client(lru).config('GET', 'maxmemory-policy')).toEqual(['maxmemory-policy', 'allkeys-lru']);
  });

  it('gives the running process id (a new one after restart, none while down) and the version', async () => {
    const server = await start({ persist: false });
    const first = server.pid!;
    expect(readFileSync(`/proc/${first}/comm`, 'utf8').trim()).toBe('redis-server');
    await server.kill();
    expect(server.pid).toBeUndefined();
    await server.start();
    expect(server.pid).toBeGreaterThan(0);
    expect(server.pid).not.toBe(first);
    expect(await redisVersion()).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('keeps its folder under `parent` when given one, and removes it on stop()', async () => {
    const parent = await mkdtemp(path.join(tmpdir(), 'redis-parent-'));
    try {
      const server = await start({ parent });
      expect(path.dirname(server.dir)).toBe(parent);
      await server.stop();
      expect(existsSync(server.dir)).toBe(false);
      expect(existsSync(parent)).toBe(true);
    } finally {
      await rm(parent, { recursive: true, force: true });
    }
  });

  it('reports what redis-server said when it will not start', async () => {
    await expect(startRedis({ maxmemoryPolicy: 'bogus' })).rejects.toThrow(/maxmemory-policy[\s\S]*noeviction/);
  });
});
