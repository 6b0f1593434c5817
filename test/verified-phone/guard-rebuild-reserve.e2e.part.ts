/**
 * The guard's meter keeps points for rebuilds (the status route's twin: test/attacks/
 * status-rebuild-meter-neighbour): after a restart on MemoryStore, a neighbour behind the same address
 * presenting its own pending verifications every window spends at most `refreshes` of the anonymous
 * meter on refreshes of records the store holds again, so a visitor's lost record is still rebuilt and
 * its verification passes; the window's upstream reads stay within `points`.
 */
import { describe, expect, it } from '@jest/globals';
import { GUARD_READS_PER_OWNER } from '../../src/guard/guard-read-meter.js';
import { call, PLATFORMS, type Platform } from '../support/verification-app.js';
import { lostRecordsSuite, numbersFrom } from './guard-host.js';

const GETS = 'GET /v1/verify/:id';
const phoneNumber = numbersFrom('+7916449');

describe.each(PLATFORMS)(
  "a neighbour's guard reads and a visitor's lost record (%s)",
  (platform: Platform) => {
    const lost = lostRecordsSuite(platform);
    const { suite } = lost;

    it("the neighbour's refreshes leave the rebuild its points: the visitor's verification passes the guard", async () => {
      const account = await suite.sb.createAccount({ balance: 100 });
      await lost.boot(account);
      const start = async () => {
        const phone = phoneNumber();
        return { id: await lost.start(phone), phone };
      };
      const handles: string[] = [];
      for (let i = 0; i < GUARD_READS_PER_OWNER.points; i++) handles.push((await start()).id);
      const visitor = await start();
      // A deploy: the MemoryStore is new, the sessions are pending upstream.
      await lost.deploy(account);
      const guarded = (id: string) =>
        call(suite.host!.url, 'POST', '/account/phone', {}, { 'x-verification-id': id });
      // The neighbour's first window rebuilds its records (every point of the window).
      for (const id of handles) expect((await guarded(id)).status).toBe(409);
      await suite.sb.call(suite.sb.sessionsFor(visitor.phone)[0]!.request_id, visitor.phone);
      expect((await guarded(visitor.id)).status).toBe(403);

      await suite.sb.advance(GUARD_READS_PER_OWNER.windowMs);
      const before = suite.sb.requestCount(GETS);
      for (const id of handles) expect((await guarded(id)).status).toBe(409);
      const signup = await guarded(visitor.id);
      expect({ status: signup.status, phone: signup.body.phone }).toEqual({
        status: 201,
        phone: visitor.phone,
      });
      expect(suite.sb.requestCount(GETS) - before).toBe(GUARD_READS_PER_OWNER.refreshes + 1);
    });
  },
);
