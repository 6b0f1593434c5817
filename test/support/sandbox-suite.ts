import { afterAll, afterEach, beforeAll, beforeEach } from '@jest/globals';
import { VerificationSandbox, type SandboxOptions } from '../../src/testing/index.js';
import { createTestApp, type CreateTestAppOptions, type TestApp } from './verification-app.js';

/** The suite's sandbox and the host apps booted beside it. */
export interface SandboxSuite {
  /** Started before the suite's first test (with the default options its clock moves only when a test moves it), closed after its last. */
  readonly sb: VerificationSandbox;
  /** The host the running test booted, if any: closed after the test. */
  host: TestApp | undefined;
  /**
   * Boots a host app beside the sandbox, from createTestApp's options or with a folder's own maker
   * (`() => startHost(platform, suite.sb)`): called in a test, the app is closed after the test; called in a
   * `beforeAll`, after the suite's last test (before the sandbox).
   */
  boot(host: CreateTestAppOptions | (() => Promise<TestApp>)): Promise<TestApp>;
}

/**
 * The one way a suite builds a sandbox-backed host: one sandbox for the suite (by default `{ port: 0,
 * freezeClock: true }`; `sandbox` options are laid over it), host apps from `suite.boot` (or a test's own
 * `suite.host`), each closed when its test or the suite ends. Call it in a `describe` block (or at the top of a
 * spec file); tests read `suite.sb`.
 */
export function sandboxSuite(sandbox: SandboxOptions = {}): SandboxSuite {
  let sb: VerificationSandbox | undefined;
  let inTest = false;
  const forTest: TestApp[] = [];
  const forSuite: TestApp[] = [];
  const suite: SandboxSuite = {
    get sb(): VerificationSandbox {
      if (!sb) throw new Error('the sandbox starts before the suite’s first test');
      return sb;
    },
    host: undefined,
    async boot(host: CreateTestAppOptions | (() => Promise<TestApp>)): Promise<TestApp> {
      const booted = typeof host === 'function' ? await host() : await createTestApp(host);
      let closed: Promise<void> | undefined;
      // A test may close its app itself (to test what closing does): the suite's close is then a no-op.
      const app: TestApp = { ...booted, close: () => (closed ??= booted.close()) };
      (inTest ? forTest : forSuite).push(app);
      return app;
    },
  };
  beforeAll(async () => {
    sb = await VerificationSandbox.start({ port: 0, freezeClock: true, ...sandbox });
  });
  beforeEach(() => {
    inTest = true;
  });
  afterEach(async () => {
    inTest = false;
    await suite.host?.close();
    suite.host = undefined;
    for (const app of forTest.splice(0)) await app.close();
  });
  afterAll(async () => {
    for (const app of forSuite.splice(0)) await app.close();
    await sb?.close();
  });
  return suite;
}
