/**
 * How src/ loads the packages it runs on that are CommonJS, or ES modules over CommonJS ones: sharp,
 * BullMQ, ioredis, the AWS SDK's S3 client and undici, each through its module in this folder, with
 * `require`. Imported from an ES module instead, each CommonJS file they load is read once more, by
 * Node's cjs-module-lexer, for the names it exports (sharp's own ES build imports semver's CommonJS):
 * on Node 20, 0.1 to 0.17 s more CPU for each of sharp, BullMQ, ioredis and the AWS SDK at every start
 * of a process (docs/performance.md). Their types are imported as usual (`import type`);
 * lint/commonjs-by-require.grit keeps value imports of them out of src/.
 */
import { createRequire } from 'node:module';

export const requirePackage = createRequire(import.meta.url);
