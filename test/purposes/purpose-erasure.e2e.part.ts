/**
 * Erasure of a number and its purposes: the coalescing claim keyed with the purpose goes (it would hand
 * back an erased session); the purpose's own per-number limit stays (a count under a keyed digest that
 * expires with its window: an erasure buys no fresh budget), on MemoryStore.
 */
import { describe, expect, it } from '@jest/globals';
import { ProtectionKeys } from '../../src/protection/protection-keys.js';
import { purposeKey } from '../../src/protection/request-rate-limits.js';
import { RESOLVED_VERIFICATION_OPTIONS } from '../../src/options/verification-options.tokens.js';
import type { ResolvedVerificationOptions } from '../../src/options/verification.options.js';
import { MemoryStore } from '../../src/store/memory.store.js';
import { VerificationErasure } from '../../src/verification/verification-erasure.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { dumpMemoryStore } from '../support/store-dump.js';
import { call, createTestApp } from '../support/verification-app.js';
import { moduleOptions } from '../webhooks/harness.js';

describe('erasure and purposes', () => {
  const suite = sandboxSuite();

  it("a number's erasure removes its purpose-keyed coalescing claim and keeps its purpose's limit counter", async () => {
    const store = new MemoryStore({ clock: () => suite.sb.now() });
    try {
      suite.host = await createTestApp({
        platform: 'express',
        module: moduleOptions(suite.sb, {
          store,
          limits: { enabled: false, coalesceStarts: true },
          purposes: { kyc: { limits: { startPerPhone: { points: 5, windowMs: 3_600_000 } } } },
        }),
      });
      const n = `+79164470${String(process.pid % 1000).padStart(3, '0')}`;
      const started = await call(
        suite.host.url,
        'POST',
        '/verification/start',
        { phone_number: n, method: 'sms', purpose: 'kyc' },
        { 'x-user': 'erin' },
      );
      expect(started.status).toBe(201);
      const keys = suite.host.app.get<ResolvedVerificationOptions>(RESOLVED_VERIFICATION_OPTIONS, {
        strict: false,
      }).dataKeys;
      const counter = `${ProtectionKeys.startPerPurpose}:${purposeKey(keys, 'kyc', n)}`;
      const claim = ProtectionKeys.coalesce(keys, 'owner:erin', n, 'sms', 'kyc');
      const present = (key: string) =>
        dumpMemoryStore(store).some((line) => line.startsWith(`${key} `) || line.includes(key));
      expect(present(counter)).toBe(true);
      expect(present(claim)).toBe(true);
      await suite.host.app.get(VerificationErasure, { strict: false }).forget({ phoneNumber: n });
      expect(present(counter)).toBe(true);
      expect(present(claim)).toBe(false);
    } finally {
      await suite.host?.close();
      suite.host = undefined;
      await store.close();
    }
  });
});
