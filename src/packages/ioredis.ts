/** ioredis, required (./require.ts): its values as `ioredis.Redis`, its types from 'ioredis'. */
import { requirePackage } from './require.js';

export const ioredis: typeof import('ioredis') = requirePackage('ioredis');
