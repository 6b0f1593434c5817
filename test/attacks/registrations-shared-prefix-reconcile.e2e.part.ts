/**
 * Attack (lane attack-44c): two named registrations, each on its own API account, on one Redis with
 * one `keyPrefix` the host chose for both (a shape test/registration/named-store-shapes supports: "with
 * one prefix the host chose they share (the spend cap's window counts both)"). Their reconcilers then
 * share one due-queue (`reconcile`) and one record keyspace, but each asks its own account. North's
 * reconciler claims a session south started, asks north's account about it, is told 404 and releases
 * it for good ("the API no longer knows a session the module started; it is no longer polled").
 * South's user then verifies by a reverse flash call (charged on proof: the host pays for it) and
 * closes the page: no webhook (webhooks off), no status poll, and the reconciler that was the safety
 * net no longer has the session. South never emits `verification.verified`: the host paid for a
 * verification its app never hears of, and the user's sign-up never completes. With a prefix of its
 * own each (the default), the same steps end with the event.
 *
 * Expected: a registration's reconciler never drops a session it did not start (each registration's
 * due-queue its own, or a foreign session skipped), or two registrations on one prefix refused at boot.
 * Medium (the host pays for a verification it never learns of; a real user's verification is lost).
 * Failed on the code it was written against; passes since its fix.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { sharedRedisUrl } from '../support/redis-server.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import {
  bootTwoRegistrations,
  northReconcilesFirst,
  phoneNumber,
  startOn,
  verifiedBy,
} from '../registration/two-registrations.js';

describe('registrations sharing a key prefix, reconciled', () => {
  const suite = sandboxSuite();

  describe.each([
    ['a prefix of its own each (the default)', undefined],
    ['one keyPrefix the host chose for both', 'shared'],
  ])('two accounts, two named registrations, one Redis: %s', (_label, shared) => {
    it("one registration's reconciler does not drop the other's session: its verified outcome is emitted", async () => {
      const keyPrefix = shared === undefined ? undefined : `pv-shared:${randomUUID()}:`;
      const booted = await bootTwoRegistrations(suite.sb, () =>
        keyPrefix === undefined ? { url: sharedRedisUrl() } : { url: sharedRedisUrl(), keyPrefix },
      );
      suite.host = booted.app;
      const [, south] = booted.names;
      const phone = phoneNumber();
      await startOn(suite.host, south, phone);
      const [session] = suite.sb.sessionsFor(phone);
      const requestId = session!.request_id;

      // Both reconcilers tick; here north's pass comes first once south's session is due. The user calls
      // (the host is charged on this proof) and closes the page: nobody polls.
      await northReconcilesFirst(suite.sb, booted, requestId, phone);
      // The API has it verified (and charged); south's app was told nothing.
      expect(suite.sb.getSession(requestId)?.status).toBe('verified');
      expect(verifiedBy(suite.host, requestId)).toEqual([south]);
    });
  });
});
