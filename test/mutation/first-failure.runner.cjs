/**
 * The mutation run's jest runner (jest.mutation.config.js): while a mutant is active, the spec files run one
 * at a time and the run stops at the first file in which a test failed (first-failure.environment.cjs
 * records it). The mutant is killed by then; each further file would still import Nest, the module and the
 * sandbox (seconds each under load) only to skip its tests. A mutant that survives ran every file. The first
 * run (no mutant active) and any run in parallel workers run as jest's own runner does.
 */
const TestRunner = require('jest-runner').default;

const ACTIVE_MUTANT = '__STRYKER_ACTIVE_MUTANT__';
const FAILED = Symbol.for('nestjs-phone-verification.mutation.failed');

class FirstFailureRunner extends TestRunner {
  async runTests(tests, watcher, options) {
    if (!options.serial || process.env[ACTIVE_MUTANT] === undefined)
      return super.runTests(tests, watcher, options);
    for (const test of tests) {
      if (globalThis[FAILED] === true) return;
      await super.runTests([test], watcher, options);
    }
  }
}

module.exports = FirstFailureRunner;
