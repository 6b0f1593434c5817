/**
 * A delivery that failed (503) gives its webhook-id's lease back before it answers: the sender's
 * retry, sent as soon as the 503 is read, is handled, never answered `duplicate` by a lease still held
 * (which would lose the event: the sender stops on a 200). Shown on a store whose deletions land half a
 * second late, as on a loaded Redis: a release nobody waited for is still pending when the retry comes.
 * A delivery handled but whose webhook-id could not be marked done (the store failing that write) is
 * answered 503, never 200 with the store's failure left unhandled in the host's process.
 */
import { afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { VerificationSandbox } from '../../src/testing/index.js';
import { MemoryStore } from '../../src/store/memory.store.js';
import { VerificationStoreUnavailableError } from '../../src/store/store-unavailable.error.js';
import type { StoreWriteOptions } from '../../src/store/verification-store.interface.js';
import { FlakyListener } from '../events/flaky-listener.js';
import { CapturingLogger } from '../support/log-capture.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { PLATFORMS, type TestApp } from '../support/verification-app.js';
import { payloadFor, postWebhook, signed, startAccountHost, startSession } from './harness.js';

const SECRET = `whsec_${Buffer.from('webhook-lease-secret-0123456789').toString('base64')}`;
const DELETE_LAG_MS = 500;

/** A MemoryStore whose releases of webhook-ids (removals while held) land DELETE_LAG_MS late (the rest at once). */
class LaggingDeletes extends MemoryStore {
  override async replaceIfEquals(key: string, expected: string, value: string | null, ttlMs: number) {
    if (key.includes('webhook:') && value === null)
      await new Promise((landed) => setTimeout(landed, DELETE_LAG_MS));
    return super.replaceIfEquals(key, expected, value, ttlMs);
  }
}

/** A MemoryStore whose releases of webhook-ids fail, as a Redis going away between two calls would. */
class FailingDeletes extends MemoryStore {
  override async replaceIfEquals(key: string, expected: string, value: string | null, ttlMs: number) {
    if (key.includes('webhook:') && value === null)
      throw new VerificationStoreUnavailableError('replaceIfEquals', 'connection lost');
    return super.replaceIfEquals(key, expected, value, ttlMs);
  }
}

/** A MemoryStore that fails its next write of a webhook-id's `done` mark (`failDone`), as a Redis going away would. */
class FailingDoneMark extends MemoryStore {
  failDone = false;
  override async set(key: string, value: string, ttlMs: number, options?: StoreWriteOptions): Promise<void> {
    if (this.failDone && key.includes('webhook:') && value === 'done') {
      this.failDone = false;
      throw new VerificationStoreUnavailableError('set', 'connection lost');
    }
    return super.set(key, value, ttlMs, options);
  }
}

/**
 * A reverse call verified on `host`, its listener set to fail once, and `delivery`: its signed
 * `verification.verified` webhook with `webhookId`, sent now (on the sandbox's clock).
 */
async function verifiedWithFailingListener(host: TestApp, sb: VerificationSandbox, webhookId: string) {
  host.app.get(FlakyListener).failFirst = true;
  const s = await startSession(host, sb, 'reverse_flash_call');
  await sb.call(s.requestId, s.phone);
  const delivery = () =>
    postWebhook(
      `${host.url}/verification/webhooks`,
      signed(SECRET, payloadFor('verification.verified', s.requestId), {
        id: webhookId,
        timestampSeconds: Math.floor(sb.now() / 1000),
      }),
    );
  return { s, delivery };
}

describe.each(PLATFORMS)('webhook route: a failed delivery gives its lease back (%s)', (platform) => {
  const suite = sandboxSuite();
  let sb: VerificationSandbox;
  let host: TestApp;
  let store: LaggingDeletes;

  beforeAll(async () => {
    sb = suite.sb;
    store = new LaggingDeletes({ clock: () => sb.now() });
    host = await suite.boot(() =>
      startAccountHost(platform, sb, {
        module: { webhooks: { secret: SECRET }, store },
        providers: [FlakyListener],
      }),
    );
  });
  afterEach(() => {
    host.app.get(FlakyListener).failFirst = false;
  });

  it("a listener's failure answers 503 only once the lease is released: the retry sent at once is processed", async () => {
    const { s, delivery } = await verifiedWithFailingListener(host, sb, 'w_lease');
    expect((await delivery()).status).toBe(503);
    const retry = await delivery();
    expect(retry.body).toEqual({ received: true, result: 'processed' });
    expect(host.app.get(FlakyListener).of(s.requestId)).toEqual([
      'verification.verified!',
      'verification.verified',
    ]);
  });
});

describe.each(PLATFORMS)('webhook route: a delivery whose done mark fails (%s)', (platform) => {
  const suite = sandboxSuite();

  it('a lease the store would not give back is logged; a copy past the lease is processed, one event', async () => {
    const sb = suite.sb;
    const logger = new CapturingLogger();
    const host = await suite.boot(() =>
      startAccountHost(platform, sb, {
        module: { webhooks: { secret: SECRET }, store: new FailingDeletes({ clock: () => sb.now() }) },
        providers: [FlakyListener],
        logger,
      }),
    );
    const { s, delivery } = await verifiedWithFailingListener(host, sb, 'w_kept_lease');
    expect((await delivery()).status).toBe(503);
    const kept = logger.lines.filter((line) => line.includes('could not be released'));
    expect(kept.map((line) => line.split(' ')[0])).toEqual(['warn']);
    expect(kept[0]).toContain('30 s');
    await sb.advance(30_000);
    expect((await delivery()).body).toEqual({ received: true, result: 'processed' });
    expect(host.app.get(FlakyListener).of(s.requestId)).toEqual([
      'verification.verified!',
      'verification.verified',
    ]);
  });

  it('answers 503 once the store refused the mark, and leaves no rejection unhandled in the host', async () => {
    const sb = suite.sb;
    const store = new FailingDoneMark({ clock: () => sb.now() });
    const host = await suite.boot(() =>
      startAccountHost(platform, sb, { module: { webhooks: { secret: SECRET }, store } }),
    );
    const unhandled: unknown[] = [];
    const note = (reason: unknown) => void unhandled.push(reason);
    process.on('unhandledRejection', note);
    try {
      const s = await startSession(host, sb, 'reverse_flash_call');
      await sb.call(s.requestId, s.phone);
      store.failDone = true;
      const answer = await postWebhook(
        `${host.url}/verification/webhooks`,
        signed(SECRET, payloadFor('verification.verified', s.requestId), {
          id: 'w_done_mark',
          timestampSeconds: Math.floor(sb.now() / 1000),
        }),
      );
      expect(answer.status).toBe(503);
      await new Promise((settled) => setTimeout(settled, 50));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', note);
    }
  });
});
