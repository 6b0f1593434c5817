import TestSequencer from '@jest/test-sequencer';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

/**
 * The mutation run's sequencer (jest.mutation.config.js): each mutant runs only the spec files that hold a
 * test which reached it.
 *
 * Stryker runs a mutant as `jest --testNamePattern <the tests that reached it>` over the specs in reach, and
 * jest then loads every one of those files to find the tests whose names match: loading a spec file that
 * boots Nest costs about a second however few of its tests run. The first run (no mutant active, no
 * pattern) records here which file holds which test; a mutant's run keeps the files holding a test that
 * matches the pattern, and a file the first run did not see. Without a pattern (the first run, a mutant
 * that runs on import) every file runs.
 */
const ACTIVE_MUTANT = '__STRYKER_ACTIVE_MUTANT__';
const MAP_FILE = 'test-output/covering-tests.json';
const FAILED = Symbol.for('nestjs-phone-verification.mutation.failed');

/**
 * A run stops at its first failing test (first-failure.environment.cjs): the files that failed last run
 * (they killed the previous mutant, often of the same code) first, then the quickest, so that a mutant
 * is caught by a short spec before the long ones boot their hosts.
 */
function quickFirst(tests, failed) {
  return [...tests].sort(
    (a, b) => Number(failed(b)) - Number(failed(a)) || (a.duration ?? Infinity) - (b.duration ?? Infinity),
  );
}

export default class CoveringFilesSequencer extends (TestSequencer.default ?? TestSequencer) {
  constructor(options) {
    super(options);
    this.globalConfig = options?.globalConfig;
    this.rootDir = options?.contexts?.[0]?.config?.rootDir ?? process.cwd();
  }

  sort(tests) {
    // A new run: no test has failed in it yet (first-failure.environment.cjs skips the rest after one).
    globalThis[FAILED] = false;
    const ordered = quickFirst(super.sort(tests), (test) => this.hasFailed(test));
    const pattern = this.globalConfig?.testNamePattern;
    const mapFile = join(this.rootDir, MAP_FILE);
    if (!pattern || process.env[ACTIVE_MUTANT] === undefined || !existsSync(mapFile)) return ordered;
    const testsByFile = JSON.parse(readFileSync(mapFile, 'utf8'));
    const matches = new RegExp(pattern, 'i');
    const kept = ordered.filter((test) => {
      const names = testsByFile[relative(this.rootDir, test.path)];
      return names === undefined || names.some((name) => matches.test(name));
    });
    // No file matching is a map that does not fit this run: run them all rather than let a mutant survive
    // for want of its tests.
    return kept.length > 0 ? kept : ordered;
  }

  cacheResults(tests, results) {
    super.cacheResults(tests, results);
    if (process.env[ACTIVE_MUTANT] !== undefined || this.globalConfig?.testNamePattern) return;
    const mapFile = join(this.rootDir, MAP_FILE);
    const testsByFile = existsSync(mapFile) ? JSON.parse(readFileSync(mapFile, 'utf8')) : {};
    for (const file of results.testResults) {
      testsByFile[relative(this.rootDir, file.testFilePath)] = file.testResults.map((test) => test.fullName);
    }
    mkdirSync(dirname(mapFile), { recursive: true });
    writeFileSync(mapFile, JSON.stringify(testsByFile));
  }
}
