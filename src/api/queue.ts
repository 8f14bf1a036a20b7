/**
 * content-api/queue: rendering on many machines through a BullMQ queue on Redis (render --queue,
 * worker, queue status and results). Apart from the root entry so that only a program that uses the
 * queue loads bullmq and ioredis. Every name here is documented in docs/library.md, and
 * test/public-api.test.ts pins the list.
 */
// biome-ignore-all assist/source/organizeImports: grouped by part of the tool, in the order of docs/library.md

// Rendering on many machines: a BullMQ queue on Redis (render --queue, worker, queue status/results).
export { type CollectOptions, collectBatch, type QueueReport } from '../queue/collect.js';
export { connectQueue, type QueueConnection, type QueueOptions } from '../queue/connection.js';
export { type EnqueueOptions, enqueueRender } from '../queue/enqueue.js';
export type { BatchRecord, JobData } from '../queue/protocol.js';
export { type QueueStatus, queueStatus } from '../queue/status.js';
export { type RenderWorker, startWorker, type WorkerJobEvent, type WorkerOptions } from '../queue/worker.js';
