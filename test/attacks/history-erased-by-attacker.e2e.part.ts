/**
 * Attack (lane attack-44c): history keeps a verified session's trail where "nobody's failures, expiries,
 * starts, refusals or resumes push it out", the trail support reads after a takeover. But the person
 * who made that trail can erase it: `VerificationErasure.forget({ owner })`, the deletion request of
 * docs/operations.md (its example: `DELETE admin/privacy/users/:userId`, the "delete my account" a host
 * offers), removes "history entries (in the number's ring and in the owners' it names)". So an attacker
 * who verified a victim's number on its account (a phished code, a SIM swap), used it, and deletes its
 * account, takes its start, right code and `verified` outcome out of the VICTIM's number's history:
 * support, asked by the victim "who verified my number?", reads the victim's own sessions only. A
 * deletion request of one person rewrites the record kept about another person's number.
 *
 * Expected: the erasure of an owner takes its personal data out of the number's ring (the owner, its
 * callers) but the number's entries stay (kind, time, method, outcome), or the number's ring keeps a
 * mark that an erased owner verified it then.
 * Medium (rewrites evidence, the history of another person). Failed on the code it was written against; passes since its fix.
 */
import { describe, expect, it } from '@jest/globals';
import { VerificationHistory } from '../../src/history/verification-history.service.js';
import { VerificationErasure } from '../../src/verification/verification-erasure.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { call, createTestApp, PLATFORMS, type Platform } from '../support/verification-app.js';
import { moduleOptions } from '../webhooks/harness.js';

describe.each(PLATFORMS)(
  "the attacker's account deletion and the victim's number's history (%s)",
  (platform: Platform) => {
    const suite = sandboxSuite();

    it("forget({ owner }) of the attacker leaves the takeover in the victim's number's history", async () => {
      const account = await suite.sb.createAccount({ balance: 100 });
      suite.host = await createTestApp({
        platform,
        trustProxy: true,
        module: moduleOptions(suite.sb, { history: {}, limits: {} }, account),
      });
      const history = suite.host.app.get(VerificationHistory);
      const victim = platform === 'express' ? '+79164440301' : '+79164440302';
      const verify = async (user: string, ip: string) => {
        const post = (path: string, body: unknown) =>
          call(suite.host!.url, 'POST', `/verification/${path}`, body, {
            'x-user': user,
            'x-forwarded-for': ip,
          });
        const started = await post('start', { phone_number: victim, method: 'sms' });
        expect(started.status).toBe(201);
        const session = suite.sb.sessionsFor(victim).find((s) => s.status !== 'verified')!;
        await suite.sb.deliver(session.request_id);
        const code = String(suite.sb.getSession(session.request_id)!.code);
        expect(
          (await post('check', { verification_id: started.body.verification_id, code })).body.verified,
        ).toBe(true);
      };

      // The victim verifies their own number; later the attacker verifies it on its account (a phished code).
      await verify('victim', '198.51.100.10');
      await suite.sb.advance(3_600_000);
      await verify('mallory', '203.0.113.66');
      const trail = async () =>
        (await history.list({ phoneNumber: victim }))
          .filter((e) => e.owner !== 'victim')
          .map((e) => [e.kind, e.check ?? e.status]);
      expect(await trail()).toEqual([
        ['start', 'sent'],
        ['check', 'right'],
        ['outcome', 'verified'],
      ]);

      // The attacker deletes its account; the host honours the deletion request.
      await suite.host.app.get(VerificationErasure).forget({ owner: 'mallory' });

      // Support reads the victim's number's history: the takeover is still there (its owner may be gone).
      expect(await trail()).toEqual([
        ['start', 'sent'],
        ['check', 'right'],
        ['outcome', 'verified'],
      ]);
    });
  },
);
