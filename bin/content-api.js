#!/usr/bin/env node
// The process's V8 flags first, before any module that compiles WebAssembly is loaded (src/cli/runtime.ts).
import { setRuntimeFlags } from '../dist/cli/runtime.js';

setRuntimeFlags();
await import('../dist/cli/main.js');
