import { afterAll, afterEach, beforeAll } from '@jest/globals';
import { VerificationSandbox } from '../../src/testing/index.js';
import type { TestApp } from './verification-app.js';

/** The suite's sandbox and the host app of the test that runs. */
export interface SandboxSuite {
  /** Started before the suite's first test (its clock moves only when a test moves it), closed after its last. */
  readonly sb: VerificationSandbox;
  /** The host the running test booted, if any: closed after the test. */
  host: TestApp | undefined;
}

/**
 * The life most e2e suites share: one sandbox with a frozen clock for the suite, at most one host
 * app per test. Call it in a `describe` block; tests read `suite.sb` and set `suite.host`.
 */
export function sandboxSuite(): SandboxSuite {
  let sb: VerificationSandbox | undefined;
  const suite: SandboxSuite = {
    get sb(): VerificationSandbox {
      if (!sb) throw new Error('the sandbox starts before the suite’s first test');
      return sb;
    },
    host: undefined,
  };
  beforeAll(async () => {
    sb = await VerificationSandbox.start({ port: 0, freezeClock: true });
  });
  afterEach(async () => {
    await suite.host?.close();
    suite.host = undefined;
  });
  afterAll(async () => {
    await sb?.close();
  });
  return suite;
}
