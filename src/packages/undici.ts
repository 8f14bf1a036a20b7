/**
 * undici, required (./require.ts) on first use: a check or an inspect of page files never fetches, and
 * starts without it (0.17 s less CPU on Node 20). Its values as `undici().request`, its types from 'undici'.
 */
import { requirePackage } from './require.js';

export const undici = (): typeof import('undici') => requirePackage('undici');
