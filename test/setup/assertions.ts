/**
 * Each test's count of assertions made (vitest's own count of `expect` calls), kept in its meta
 * for the reporter's total: the suite is made faster only while that total holds
 * (docs/development.md, "Speed and the assertion count").
 */
import { afterEach, expect } from 'vitest';

declare module 'vitest' {
  interface TaskMeta {
    assertions?: number;
  }
}

// Registered first, so it runs after every test's own afterEach hooks (vitest runs them as a stack).
afterEach(({ task }) => {
  task.meta.assertions = expect.getState().assertionCalls;
});
