/**
 * vitest's default reporter, and at the end of the run, just above its summary, every test and suite
 * that was skipped, by name, with its reason: the note of `context.skip(note)`, else how it was skipped
 * (`skip`/`skipIf` give none; the test's name often says why). Nothing is skipped silently.
 *
 * Tests left out by a `-t` filter are not listed: they were not chosen, not skipped.
 *
 * Then the count of assertions the tests made (test/setup/assertions.ts), and the slowest files: what a
 * change that makes the suite faster must keep, and where its time goes.
 */
import type { SerializedError } from 'vitest';
import { DefaultReporter, type TestCase, type TestModule, type TestRunEndReason, type TestSuite } from 'vitest/node';

/** The name `-t` matches against: the suites' and the test's names, joined by spaces (as vitest's getTaskFullName). */
function filterName(entity: TestCase | TestSuite): string {
  const names = [entity.name];
  for (let parent = entity.parent; parent.type === 'suite'; parent = parent.parent) names.unshift(parent.name);
  return names.join(' ');
}

/** The property tests' files: how many cases, and so assertions, each run makes is theirs to decide. */
const PROPERTY = /\.property\.test\.ts$/;

export class SkippedReporter extends DefaultReporter {
  private modules: ReadonlyArray<TestModule> = [];

  override onTestRunEnd(
    testModules: ReadonlyArray<TestModule>,
    unhandledErrors: ReadonlyArray<SerializedError>,
    reason: TestRunEndReason,
  ): void {
    this.modules = testModules;
    super.onTestRunEnd(testModules, unhandledErrors, reason);
  }

  override reportTestSummary(...args: Parameters<DefaultReporter['reportTestSummary']>): void {
    const lines = this.skipped();
    if (lines.length > 0) {
      this.log();
      this.log(' Skipped:');
      for (const line of lines) this.log(`   ↓ ${line}`);
    }
    this.log();
    const [all, property] = [this.assertions(), this.assertions(PROPERTY)];
    this.log(` Assertions  ${all - property} made, and ${property} by the property tests (their random cases decide)`);
    this.log(` Slowest     ${this.slowest(5)}`);
    super.reportTestSummary(...args);
  }

  /** The assertions (`expect` calls) made by every test that ran, or by those of the files `only` matches. */
  private assertions(only?: RegExp): number {
    let total = 0;
    for (const module of this.modules) {
      if (only && !only.test(module.moduleId)) continue;
      for (const test of module.children.allTests()) total += test.meta().assertions ?? 0;
    }
    return total;
  }

  /** The `count` files that took longest, each with its seconds (its tests and hooks, not its import). */
  private slowest(count: number): string {
    return this.modules
      .map((module) => ({ file: this.relative(module.moduleId), ms: module.diagnostic().duration }))
      .sort((a, b) => b.ms - a.ms)
      .slice(0, count)
      .map(({ file, ms }) => `${file} ${(ms / 1000).toFixed(0)} s`)
      .join(', ');
  }

  /** One line for each skipped test, or for each skipped suite (with its count of tests). */
  private skipped(): string[] {
    const pattern = this.ctx.config.testNamePattern;
    const lines: string[] = [];
    const visit = (file: string, children: Iterable<TestCase | TestSuite>) => {
      for (const child of children) {
        if (child.type === 'suite') {
          // A suite skipped as a whole, in one line (with a -t filter, the tests it chose, one by one).
          if (child.options.mode === 'skip' && child.state() === 'skipped' && !pattern) {
            const tests = [...child.children.allTests()];
            const count = `${tests.length} test${tests.length === 1 ? '' : 's'}`;
            lines.push(`${file} > ${child.fullName} (${count}): skip or skipIf, no reason given`);
          } else {
            visit(file, child.children);
          }
          continue;
        }
        const result = child.result();
        if (result.state !== 'skipped') continue;
        let why: string;
        if (result.note) why = result.note;
        else if (child.options.mode === 'todo') why = 'todo';
        else if (child.options.mode === 'skip') {
          if (pattern && !pattern.test(filterName(child))) continue;
          why = 'skip or skipIf, no reason given';
        } else why = 'context.skip(), no reason given';
        lines.push(`${file} > ${child.fullName}: ${why}`);
      }
    };
    for (const module of this.modules) visit(this.relative(module.moduleId), module.children);
    return lines;
  }
}
