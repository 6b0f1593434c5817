/**
 * An erasure's mark refuses the subject's claims for as long as a claim made before it is accepted: the
 * longest claim lifetime of the registration, the default one (`verifiedPhone.claimTtlMs`) included, not
 * only the declared purposes'. A host whose claims last two days, without purposes, keeps an erased
 * number's claim refused past the records' retention (a day and ten minutes), to the claim's own end.
 * On the module's MemoryStore and on a RedisStore opened from a URL.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from '@jest/globals';
import { VerifiedPhoneClaims } from '../../src/guard/verified-phone-claims.js';
import type { StoreOption } from '../../src/store/create-store.js';
import { VerificationErasure } from '../../src/verification/verification-erasure.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { sharedRedisUrl } from '../support/redis-server.js';
import { createTestApp, type TestApp } from '../support/verification-app.js';
import { moduleOptions } from '../webhooks/harness.js';

const HOUR = 3_600_000;
const CLAIM_TTL_MS = 48 * HOUR;

let serial = 0;
const phone = () =>
  `+7916${String((process.pid + 3) % 1000).padStart(3, '0')}${String(8000 + ++serial).padStart(4, '0')}`;

const STORES: [string, () => StoreOption | undefined][] = [
  ['MemoryStore', () => undefined],
  ['RedisStore', () => ({ url: sharedRedisUrl(), keyPrefix: `claim-life:${randomUUID()}:` })],
];

describe('an erasure outlives the claims the default lifetime gives', () => {
  const suite = sandboxSuite();
  const hosts: TestApp[] = [];
  afterEach(async () => {
    for (const h of hosts.splice(0)) await h.close();
  });

  it.each(STORES)(
    'claims of two days, no purposes declared: an erased number’s claim is refused a tick before its end, 25 h after the erasure (%s)',
    async (_store, store) => {
      const host = await createTestApp({
        platform: 'express',
        module: moduleOptions(suite.sb, {
          store: store(),
          verifiedPhone: { claimTtlMs: CLAIM_TTL_MS },
          limits: { enabled: false },
        }),
      });
      hosts.push(host);
      const claims = host.app.get(VerifiedPhoneClaims, { strict: false });
      const [erased, kept] = [phone(), phone()];
      const owner = `owner-${randomUUID()}`;
      const verifiedAt = new Date(suite.sb.now());
      const erasedClaim = await claims.issue({ phoneNumber: erased, owner, verifiedAt });
      const keptClaim = await claims.issue({ phoneNumber: kept, owner, verifiedAt });

      await suite.sb.advance(1000);
      await host.app.get(VerificationErasure, { strict: false }).forget({ phoneNumber: erased });
      expect(await claims.read(erasedClaim, owner)).toBeNull();

      // Past the records' retention (24 h and a session's 10 min), still within the claims' two days.
      await suite.sb.advance(25 * HOUR);
      expect(await claims.read(keptClaim, owner)).not.toBeNull();
      expect(await claims.read(erasedClaim, owner)).toBeNull();
      // A tick before the claim's own end.
      await suite.sb.advance(verifiedAt.getTime() + CLAIM_TTL_MS - 1 - suite.sb.now());
      expect(await claims.read(keptClaim, owner)).not.toBeNull();
      expect(await claims.read(erasedClaim, owner)).toBeNull();
    },
  );
});
