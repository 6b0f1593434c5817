/**
 * A start in doubt on a store whose writes lag (a Redis primary under load): the start's 503 is answered
 * only once the start is remembered. A frontend told "try again" before that, and a webhook of the session
 * arriving right after the answer, would find no start to adopt it: the session (paid for) would never be
 * recorded, its outcome never emitted.
 */
import { afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { MemoryStore } from '../../src/store/memory.store.js';
import type { StoreWriteOptions } from '../../src/store/verification-store.interface.js';
import type { VerificationSandbox } from '../../src/testing/index.js';
import { CapturingLogger } from '../support/log-capture.js';
import { call, type TestApp } from '../support/verification-app.js';
import { drive, eventsOf, moduleOptions, nextPhone, settle, startHost } from '../webhooks/harness.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

/** Long enough that no other answer of the sandbox times out on a loaded CI machine. */
const TIMEOUT_MS = 1000;

/** A MemoryStore whose writes of in-doubt starts wait until the test lets them through. */
class LaggingStore extends MemoryStore {
  held = 0;
  /** Fail those writes instead (the store down for them). */
  failing = false;
  #release!: () => void;
  readonly #gate = new Promise<void>((resolve) => (this.#release = resolve));
  release(): void {
    this.#release();
  }
  override async set(key: string, value: string, ttlMs: number, options?: StoreWriteOptions): Promise<void> {
    if (key.startsWith('indoubt:')) {
      this.held += 1;
      if (this.failing) throw new Error('store write refused');
      await this.#gate;
    }
    return super.set(key, value, ttlMs, options);
  }
}

describe('a start in doubt on a store whose writes lag', () => {
  const suite = sandboxSuite();
  let sb: VerificationSandbox;
  let host: TestApp | undefined;
  let store: LaggingStore | undefined;
  beforeAll(() => {
    sb = suite.sb;
  });
  afterEach(async () => {
    sb.clearFaults();
    store?.release();
    await host?.close();
    await store?.close();
  });

  const boot = async (logger?: CapturingLogger) => {
    store = new LaggingStore({ clock: () => sb.now() });
    host = await startHost('express', sb, {
      module: {
        store,
        ...(logger === undefined ? {} : { logger }),
        api: { ...moduleOptions(sb).api, timeoutMs: TIMEOUT_MS },
        limits: {},
      },
    });
    return { host, store };
  };

  it('the 503 waits for the start to be remembered; the session is then adopted by its webhook', async () => {
    const { host, store } = await boot();
    const [phone, owner] = [nextPhone(), 'user-lagging'];
    sb.addFault({ route: 'POST /v1/verify', kind: 'latency', latency_ms: 2500, count: 1 });
    const answer = call(
      host.url,
      'POST',
      '/verification/start',
      { phone_number: phone, method: 'sms' },
      {
        'x-user': owner,
      },
    );
    // The module gives up at its time-out and writes the start in doubt: that write lags.
    const until = Date.now() + 5000;
    while (store.held === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    expect(store.held).toBe(1);
    const first = await Promise.race([
      answer.then(() => 'answered'),
      new Promise((r) => setTimeout(r, 500, 'still waiting')),
    ]);
    expect(first).toBe('still waiting');
    store.release();
    expect((await answer).status).toBe(503);

    // The session exists upstream: its first webhook, right after the answer, adopts it with the start's owner.
    while (sb.sessionsFor(phone).length === 0 && Date.now() < until)
      await new Promise((r) => setTimeout(r, 20));
    const requestId = sb.sessionsFor(phone)[0]!.request_id;
    await drive(sb, { requestId, phone, method: 'sms', owner, verificationId: '' }, 'failed');
    await settle(sb);
    expect(eventsOf(host, requestId)).toEqual(['verification.failed']);
    expect(host.events.find((e) => e.requestId === requestId)?.owner).toBe(owner);
  });

  it('a store refusing that write: the start still answers 503 (the cooldown kept, nothing sent again) and the operator is told the start could not be remembered', async () => {
    const logger = new CapturingLogger();
    const { host, store } = await boot(logger);
    store.failing = true;
    const [phone, owner] = [nextPhone(), 'user-refused-write'];
    sb.addFault({ route: 'POST /v1/verify', kind: 'latency', latency_ms: 2500, count: 1 });
    const start = () =>
      call(
        host.url,
        'POST',
        '/verification/start',
        { phone_number: phone, method: 'sms' },
        { 'x-user': owner },
      );
    const answer = await start();
    expect({ status: answer.status, error: answer.body.error_code }).toEqual({
      status: 503,
      error: 'service_unavailable',
    });
    expect(logger.lines.filter((l) => l.includes('an in-doubt start could not be remembered'))).toEqual([
      expect.stringMatching(/^warn .*store write refused/),
    ]);
    expect((await start()).status).toBe(429);
  });
});
