/**
 * What the queue relies on of BullMQ beyond its documented API (#36), checked without Redis, in
 * milliseconds: an upgrade that changes any of it fails here, by name, before a queue test runs.
 * bull-worker.ts reads each job hash as BullMQ will (`raw2NextJobData`, `createJob`), intercepts the
 * scripts that fetch a job (`execCommand` with their names, wrapped in `createBackend`), and drops
 * a job by BullMQ's key names; connection.ts and collect.ts read BullMQ's keys of a queue.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { QueueKeys, RedisQueueBackend, raw2NextJobData, Worker } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { FETCHES } from '../../src/queue/bull-worker.js';
import { keysFor } from '../../src/queue/protocol.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const BULLMQ = path.join(ROOT, 'node_modules/bullmq');
/** BullMQ's compiled classes, as the worker runs them. */
const classes = () =>
  readdirSync(path.join(BULLMQ, 'dist/esm/classes'))
    .filter((file) => file.endsWith('.js'))
    .map((file) => readFileSync(path.join(BULLMQ, 'dist/esm/classes', file), 'utf8'))
    .join('\n');

describe("BullMQ's surface the queue relies on", () => {
  it('is the version package.json pins, exactly', () => {
    const pinned = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).dependencies.bullmq;
    const installed = JSON.parse(readFileSync(path.join(BULLMQ, 'package.json'), 'utf8')).version;
    expect(pinned).toMatch(/^\d+\.\d+\.\d+$/);
    expect(installed).toBe(pinned);
  });

  it('raw2NextJobData reads a fetched hash as the worker does, and throws on a field it cannot read', () => {
    const hash = ['name', 'render', 'data', '{"a":1}', 'opts', '{"attempts":3}', 'timestamp', '5'];
    const [json, id] = raw2NextJobData([hash, '7', 0, 0]) as [Record<string, unknown>, string];
    expect(id).toBe('7');
    // The data stays the text Redis holds: readJobData parses it, bounded.
    expect(json).toMatchObject({ name: 'render', data: '{"a":1}', opts: { attempts: 3 }, timestamp: 5 });
    expect(() => raw2NextJobData([['opts', '{'], '7', 0, 0])).toThrow(SyntaxError);
  });

  it('Worker has the methods bull-worker.ts overrides, and BullMQ calls createBackend as it constructs', () => {
    expect(typeof (Worker.prototype as unknown as Record<string, unknown>).createJob).toBe('function');
    expect(typeof (Worker.prototype as unknown as Record<string, unknown>).createBackend).toBe('function');
    expect(typeof RedisQueueBackend.prototype.execCommand).toBe('function');
    expect(classes()).toMatch(/this\.createBackend\(\)/);
  });

  it('fetches jobs through execCommand with the script names bull-worker.ts intercepts', () => {
    const called = new Set([...classes().matchAll(/execCommand\(\w+, '(\w+)'/g)].map((match) => match[1]));
    expect([...FETCHES].filter((name) => !called.has(name))).toEqual([]);
    const scripts = readdirSync(path.join(BULLMQ, 'dist/esm/commands')).map((file) => file.replace(/-\d+\.lua$/, ''));
    expect([...FETCHES].filter((name) => !scripts.includes(name))).toEqual([]);
  });

  it("names a queue's keys as protocol.ts's bullPrefix assumes", () => {
    const keys = new QueueKeys('bull').getKeys('content-api');
    const prefix = keysFor('content-api').bullPrefix;
    for (const name of ['wait', 'paused', 'active', 'stalled', 'delayed', 'prioritized', 'completed', 'failed']) {
      expect(keys[name], name).toBe(`${prefix}${name}`);
    }
  });
});
