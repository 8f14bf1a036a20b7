import { defineConfig } from 'vitest/config';
import { SkippedReporter } from './scripts/skipped-reporter.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // V8's flags as the CLI sets them (relaxed SIMD on Node 20), before any test runs; each test's count of
    // assertions, for the total the reporter prints; the process left as each file found it.
    setupFiles: ['test/setup/runtime.ts', 'test/setup/assertions.ts', 'test/setup/process.ts'],
    // Two files at a time whatever the cores (vitest's default is one fewer than the cores: one, on the
    // two-core machine CI runs on): much of a file's time is waiting on servers, workers and disks,
    // which the other file's work fills.
    maxWorkers: 2,
    // The files of a worker share one process and the modules they import, loaded once: the library
    // keeps no process-wide state (#36), and each file leaves the environment, the working folder and
    // its temporary folders as it found them (test/setup/process.ts). Loading the modules again for
    // every file cost a third of the suite's CPU.
    isolate: false,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // The default reporter, and every skipped test or suite named, with its reason, above the summary
    // (and on GitHub Actions its annotations, which vitest adds only when no reporter is configured).
    reporters: [new SkippedReporter(), ...(process.env.GITHUB_ACTIONS === 'true' ? ['github-actions' as const] : [])],
    // The AWS SDK's notice of its 2027 releases (the CLI turns it off too): not the tests' to print.
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
  },
});
