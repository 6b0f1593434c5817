/**
 * The ledger counts a session's transition before the route that saw it answers: on a store whose
 * counter writes land late (a loaded Redis), the host's report read right after a start's 201 shows
 * the start, and after the check's `verified` answer the verification and its charge. On a store that
 * refuses those writes, the route still answers, the failure is logged, and nothing is left unhandled
 * in the host's process ("counting never fails its caller").
 */
import { describe, expect, it } from '@jest/globals';
import { VerificationLedger } from '../../src/ledger/verification-ledger.service.js';
import { MemoryStore } from '../../src/store/memory.store.js';
import { VerificationStoreUnavailableError } from '../../src/store/store-unavailable.error.js';
import type { StoreWriteOptions } from '../../src/store/verification-store.interface.js';
import type { VerificationSandbox } from '../../src/testing/index.js';
import { CapturingLogger } from '../support/log-capture.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { call, PLATFORMS, type Platform, type TestApp } from '../support/verification-app.js';
import { startAccountHost, startSession } from '../webhooks/harness.js';

/** Real time a ledger counter's increment takes to land on the lagging store. */
const LAG_MS = 300;

/** A MemoryStore whose increments of the ledger's figures land LAG_MS late, or fail (`failLedger`). */
class LedgerCounterStore extends MemoryStore {
  failLedger = false;
  override async increment(
    key: string,
    by: number,
    ttlMs: number,
    options?: StoreWriteOptions,
  ): Promise<{ value: number; expiresAt: number }> {
    // The day's row counter (`:rows`) hands out slots; the figures are every other `ledger:` counter.
    if (key.includes('ledger:') && !key.endsWith(':rows')) {
      if (this.failLedger) throw new VerificationStoreUnavailableError('increment', 'connection lost');
      await new Promise((landed) => setTimeout(landed, LAG_MS));
    }
    return super.increment(key, by, ttlMs, options);
  }
}

describe.each(PLATFORMS)(
  'the ledger on a store whose counter writes lag or fail (%s)',
  (platform: Platform) => {
    const suite = sandboxSuite();

    const boot = async (sb: VerificationSandbox, store: LedgerCounterStore, logger?: CapturingLogger) =>
      suite.boot(() => startAccountHost(platform, sb, { module: { ledger: {}, store }, logger }));
    const ledgerOf = (host: TestApp) => host.app.get(VerificationLedger, { strict: false });

    it("a report read right after the start's 201 shows the start; after the check's verified answer, the verification and its charge", async () => {
      const sb = suite.sb;
      const store = new LedgerCounterStore({ clock: () => sb.now() });
      const host = await boot(sb, store);
      const s = await startSession(host, sb, 'sms', 'ledger-user');
      expect((await ledgerOf(host).report()).totals).toMatchObject({ started: 1, verified: 0, expected: 0 });

      await sb.deliver(s.requestId);
      const code = String(sb.getSession(s.requestId)!.code);
      const checked = await call(
        host.url,
        'POST',
        '/verification/check',
        { verification_id: s.verificationId, code },
        { 'x-user': s.owner },
      );
      expect([checked.status, checked.body.verified]).toEqual([200, true]);
      const charged = sb.getSession(s.requestId)!;
      expect(charged.charged).toBe(true);
      expect((await ledgerOf(host).report()).totals).toMatchObject({
        started: 1,
        delivered: 1,
        verified: 1,
        expected: charged.cost.amount,
      });
    });

    it('a store refusing the counters: the start still answers 201, the failure is logged, nothing is unhandled', async () => {
      const sb = suite.sb;
      const store = new LedgerCounterStore({ clock: () => sb.now() });
      const logger = new CapturingLogger();
      const host = await boot(sb, store, logger);
      const unhandled: unknown[] = [];
      const note = (reason: unknown) => void unhandled.push(reason);
      process.on('unhandledRejection', note);
      try {
        store.failLedger = true;
        await startSession(host, sb, 'sms', 'ledger-user-2');
        await new Promise((settled) => setTimeout(settled, 50));
        expect(unhandled).toEqual([]);
        expect(
          logger.lines.filter((l) => l.includes('ledger: a session transition could not be counted')),
        ).toHaveLength(1);
      } finally {
        process.off('unhandledRejection', note);
      }
    });
  },
);
