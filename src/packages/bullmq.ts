/** BullMQ, required (./require.ts): its values as `bullmq.Worker`, its types from 'bullmq'. */
import { requirePackage } from './require.js';

export const bullmq: typeof import('bullmq') = requirePackage('bullmq');
