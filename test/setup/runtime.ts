/**
 * Each test process starts as the CLI does (bin/content-api.js): V8's flags set before any test
 * compiles WebAssembly, so the library's tests run the metric's engine the CLI runs.
 */
import { setRuntimeFlags } from '../../src/cli/runtime.js';

setRuntimeFlags();
