/** sharp (libvips), required (./require.ts). */
import { requirePackage } from './require.js';

export const sharp: typeof import('sharp').default = requirePackage('sharp');
