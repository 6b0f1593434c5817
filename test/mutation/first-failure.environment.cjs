/**
 * The mutation run's test environment (jest.mutation.config.js): once a test has failed while a mutant is
 * active, the mutant is killed, so the rest of that run is skipped (its tests, and the hooks that boot a
 * host, which jest does not run for a block with no test left). Jest has no bail that Stryker can use
 * (`bail: false` in its runner): without this a mutant caught by its first spec file still waited for every
 * other file that reached it. A skipped test never fails, so a mutant that survives ran all its tests. The
 * first run (no mutant active) runs everything: it records coverage. The flag is reset by the sequencer at
 * the start of each run (covering-files.sequencer.mjs); jest runs in band under Stryker, one process.
 */
const { TestEnvironment } = require('jest-environment-node');

const ACTIVE_MUTANT = '__STRYKER_ACTIVE_MUTANT__';
const FAILED = Symbol.for('nestjs-phone-verification.mutation.failed');

function skipAll(block) {
  block.mode = 'skip';
  for (const child of block.children) {
    if (child.type === 'describeBlock') skipAll(child);
    else child.mode = 'skip';
  }
}

class FirstFailureEnvironment extends TestEnvironment {
  async handleTestEvent(event, state) {
    if (process.env[ACTIVE_MUTANT] === undefined) return;
    if (event.name === 'run_start' && globalThis[FAILED] === true) skipAll(state.rootDescribeBlock);
    // A test that already holds an error (its block's beforeAll failed: jest gives each of its tests that
    // error) is let through to fail; skipping it would drop the error and the mutant would survive.
    else if (event.name === 'test_start' && globalThis[FAILED] === true && event.test.errors.length === 0)
      event.test.mode = 'skip';
    else if ((event.name === 'test_done' && event.test.errors.length > 0) || event.name === 'hook_failure')
      globalThis[FAILED] = true;
  }
}

module.exports = FirstFailureEnvironment;
