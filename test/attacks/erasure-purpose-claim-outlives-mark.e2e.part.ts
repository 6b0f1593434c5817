/**
 * Attack (lane attack-m): a purpose may keep its claims longer than `verifiedPhone.claimTtlMs`
 * (`purposes.<name>.claimTtlMs`). An erasure keeps its mark for `verifiedPhone.claimTtlMs` + slack or the
 * longest record, never the longest purpose's claim: once the mark expires, a claim issued before the
 * erasure opens the guard again for the rest of its life (a change of phone's revocation does count
 * every purpose's claim lifetime: the twin path).
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from '@jest/globals';
import { VerifiedPhoneClaims } from '../../src/guard/verified-phone-claims.js';
import { MemoryStore } from '../../src/store/memory.store.js';
import { VerificationErasure } from '../../src/verification/verification-erasure.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { createTestApp, type TestApp } from '../support/verification-app.js';
import { moduleOptions } from '../webhooks/harness.js';

const HOUR = 3_600_000;
const WEEK = 7 * 24 * HOUR;

describe('attack: a long-lived purpose claim outlives the erasure mark', () => {
  const suite = sandboxSuite();
  const hosts: TestApp[] = [];
  afterEach(async () => {
    for (const h of hosts.splice(0)) await h.close();
  });

  it.each(['owner', 'phoneNumber'] as const)(
    'forget({ %s }): a week-long step_up claim issued before it stays refused all its life, to its last tick',
    async (by) => {
      const store = new MemoryStore({ clock: () => suite.sb.now() });
      const host = await createTestApp({
        platform: 'express',
        module: moduleOptions(suite.sb, {
          store,
          limits: { spendCap: false },
          purposes: { step_up: { claimTtlMs: WEEK } },
        }),
      });
      hosts.push(host);
      const claims = host.app.get(VerifiedPhoneClaims, { strict: false });
      const [n, owner] = [
        `+7916${String(process.pid % 1000).padStart(3, '0')}4${by === 'owner' ? 1 : 2}01`,
        `o-${randomUUID()}`,
      ];
      const issuedAt = suite.sb.now();
      const claim = await claims.issue({
        phoneNumber: n,
        owner,
        verifiedAt: new Date(suite.sb.now()),
        purpose: 'step_up',
      });
      expect(await claims.read(claim, owner)).not.toBeNull();
      await suite.sb.advance(1);

      await host.app
        .get(VerificationErasure, { strict: false })
        .forget(by === 'owner' ? { owner } : { phoneNumber: n });
      expect(await claims.read(claim, owner)).toBeNull();

      // A day and two hours on, the claim still has five days to live: it must still be refused.
      await suite.sb.advance(26 * HOUR);
      expect(await claims.read(claim, owner)).toBeNull();
      // And at the last tick of its life (issued a tick before the erasure, accepted a week).
      await suite.sb.advance(issuedAt + WEEK - 1 - suite.sb.now());
      expect(await claims.read(claim, owner)).toBeNull();
      await store.close();
    },
  );
});
