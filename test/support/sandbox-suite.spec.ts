import { beforeAll, describe, expect, it } from '@jest/globals';
import type { VerificationSandbox } from '../../src/testing/index.js';
import { sandboxSuite } from './sandbox-suite.js';
import { createTestApp, type TestApp } from './verification-app.js';

// What sandboxSuite promises the suites built on it: when each host app and the sandbox close, as a host's
// port answering or refusing shows it.
const closed: string[] = [];
let suiteApp: TestApp;
let testApp: TestApp;

async function answers(url: string): Promise<boolean> {
  try {
    const res = await fetch(`${url}/host/ping`, { headers: { connection: 'close' } });
    return res.status === 200;
  } catch {
    return false;
  }
}

/** A host app whose close is recorded in `closed` once it is done. */
async function tracked(name: string, sb: VerificationSandbox): Promise<TestApp> {
  const app = await createTestApp({
    platform: 'express',
    module: {
      api: { baseUrl: sb.url, apiKey: sb.demoAccount.apiKey, apiSecret: sb.demoAccount.apiSecret },
      clock: () => sb.now(),
      reconcile: { enabled: false },
    },
  });
  return {
    ...app,
    close: async () => {
      await app.close();
      closed.push(name);
    },
  };
}

describe('sandboxSuite', () => {
  const suite = sandboxSuite();
  beforeAll(async () => {
    const sb = suite.sb;
    const close = sb.close.bind(sb);
    sb.close = async () => {
      await close();
      closed.push('sandbox');
    };
    suiteApp = await suite.boot(() => tracked('suite app', sb));
  });

  it('an app booted in a test answers during it', async () => {
    testApp = await suite.boot(() => tracked('test app', suite.sb));
    expect(await answers(testApp.url)).toBe(true);
  });

  it('is closed after its test, and the app booted in beforeAll still answers', async () => {
    expect(closed).toEqual(['test app']);
    expect(await answers(testApp.url)).toBe(false);
    expect(await answers(suiteApp.url)).toBe(true);
  });

  it('an app its test closes itself', async () => {
    const app = await suite.boot(() => tracked('closed by its test', suite.sb));
    await app.close();
  });

  it('is closed once', () => {
    expect(closed).toEqual(['test app', 'closed by its test']);
  });
});

describe('after a sandboxSuite', () => {
  it('the apps booted in its beforeAll closed, then its sandbox', async () => {
    expect(closed).toEqual(['test app', 'closed by its test', 'suite app', 'sandbox']);
    expect(await answers(suiteApp.url)).toBe(false);
  });
});
