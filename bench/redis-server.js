/**
 * A throwaway Redis for the queue benchmark: the machine's redis-server on a free loopback
 * port, its folder a temporary one, nothing saved (no RDB, no append-only file), started and
 * stopped by the bench itself. A JavaScript twin of test/fixtures/redis.ts, without restarts.
 */
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const READY_TIMEOUT_MS = 10_000;

/** A port nothing listens on just now (the system's choice for port 0). */
async function freePort() {
  const probe = net.createServer();
  probe.listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address();
  probe.close();
  await once(probe, 'close');
  return port;
}

/** Whether a Redis answers PING on `port` with +PONG. */
function pong(port) {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    let reply = '';
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.once('error', () => done(false));
    socket.once('close', () => done(false));
    socket.once('connect', () => socket.write('*1\r\n$4\r\nPING\r\n'));
    socket.on('data', (chunk) => {
      reply += chunk.toString('latin1');
      if (reply.includes('\r\n')) done(reply.startsWith('+PONG\r\n'));
    });
  });
}

/** `7.0.15`: the version of the machine's redis-server. */
export function redisVersion() {
  return execFileSync('redis-server', ['--version'], { encoding: 'utf8' }).match(/v=(\S+)/)?.[1] ?? 'unknown';
}

/** Starts redis-server in a folder under `scratch`; returns { url, port, pid, stop() }. */
export async function startRedis(scratch) {
  const dir = mkdtempSync(path.join(scratch, 'redis-'));
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const args = [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--dir',
      dir,
      '--save',
      '',
      '--appendonly',
      'no',
      '--maxmemory-policy',
      'noeviction',
      '--daemonize',
      'no',
      '--loglevel',
      'warning',
    ];
    const child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const keep = (chunk) => (output = (output + chunk).slice(-4_000));
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const exited = new Promise((resolve) => {
      child.once('error', (error) => resolve(error));
      child.once('exit', () => resolve(null));
    });
    let dead = false;
    let failure = null;
    void exited.then((error) => {
      dead = true;
      failure = error;
    });
    const killOnExit = () => child.kill('SIGKILL');
    process.once('exit', killOnExit);
    const deadline = Date.now() + READY_TIMEOUT_MS;
    while (!dead && !(await pong(port))) {
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        await exited;
        break;
      }
      await sleep(50);
    }
    if (!dead) {
      return {
        url: `redis://127.0.0.1:${port}`,
        port,
        pid: child.pid,
        async stop() {
          if (!dead) {
            const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
            child.kill('SIGTERM');
            await exited;
            clearTimeout(timer);
          }
          process.removeListener('exit', killOnExit);
          rmSync(dir, { recursive: true, force: true });
        },
      };
    }
    process.removeListener('exit', killOnExit);
    if (failure) throw new Error(`redis-server could not be started: ${failure.message}`);
    if (!output.includes('Address already in use') || attempt === 5) {
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`redis-server on port ${port} did not answer PING; its output:\n${output || '(none)'}`);
    }
  }
}
