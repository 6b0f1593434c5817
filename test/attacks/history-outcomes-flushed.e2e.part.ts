/**
 * Attack (lane attack-44): the `outcome` shelf of a number's history (outcomes and right codes, "the
 * trail support reads after a takeover") is one ring of `maxEntries` (100) that every session of the
 * number writes into, whoever started it. After a takeover (the victim's number verified on the
 * attacker's account: a right code and a `verified` outcome), the attacker's other accounts start the
 * number within the default limits (15 starts of a number an hour, each from its own address and
 * owner) by `reverse_flash_call`, a method charged on proof (nothing billed for a session that does
 * not verify, and the one the pumping defence still offers), and let each fail (the sandbox's
 * `fail`, as a call from another number would; an expiry writes an outcome the same way): about
 * 100 `failed` outcomes later (about 7 hours, nothing paid by anyone, all admitted by protection),
 * the takeover's right code and `verified` outcome are gone from the number's history.
 *
 * Expected: a number's right codes and `verified` outcomes are not evicted by other owners' sessions
 * (kept per writer, or verified outcomes on a shelf that failures and expiries do not share). Nor, since
 * free sessions are filed with refusals (attack-n's Low), the number's paid starts and their failures, or
 * the start of a session a reverse call verified.
 *
 * Failed on the code it was written against; passes since its fix.
 */
import { describe, expect, it } from '@jest/globals';
import { VerificationHistory } from '../../src/history/verification-history.service.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { call, createTestApp } from '../support/verification-app.js';
import { moduleOptions, reconcilerOf } from '../webhooks/harness.js';

const HOUR = 3_600_000;

describe('history: a takeover’s trail under the attacker’s other accounts’ sessions (express)', () => {
  const suite = sandboxSuite();

  it("~100 other owners' failed sessions of the number leave the right code and the verified outcome", async () => {
    const account = await suite.sb.createAccount({ balance: 10_000 });
    suite.host = await createTestApp({
      platform: 'express',
      trustProxy: true,
      module: moduleOptions(suite.sb, { history: {}, limits: {} }, account),
    });
    const history = suite.host.app.get(VerificationHistory);
    const phone = '+79164440201';
    const post = (path: string, body: unknown, user: string, ip: string) =>
      call(suite.host!.url, 'POST', `/verification/${path}`, body, { 'x-user': user, 'x-forwarded-for': ip });

    // Before it: the number's owner paid for an SMS that failed, and a friend verified it by a reverse call.
    const paid = await post('start', { phone_number: phone, method: 'sms' }, 'owner', '192.0.2.10');
    expect(paid.status).toBe(201);
    await suite.sb.fail(suite.sb.sessionsFor(phone)[0]!.request_id);
    const free = await post(
      'start',
      { phone_number: phone, method: 'reverse_flash_call' },
      'friend',
      '192.0.2.11',
    );
    expect(free.status).toBe(201);
    await suite.sb.call(suite.sb.sessionsFor(phone).find((s) => s.status === 'sent')!.request_id, phone);
    // Their outcomes, as the reconciler learns them.
    for (let i = 0; i < 3; i++) {
      await suite.sb.advance(HOUR);
      await reconcilerOf(suite.host).runOnce();
    }
    const trailOf = async (owner: string) =>
      (await history.list({ phoneNumber: phone }))
        .filter((e) => e.owner === owner)
        .map((e) => [e.kind, e.method, e.check ?? e.status]);
    const before = { owner: await trailOf('owner'), friend: await trailOf('friend') };
    expect(before).toEqual({
      owner: [
        ['start', 'sms', 'sent'],
        ['outcome', 'sms', 'failed'],
      ],
      friend: [
        ['start', 'reverse_flash_call', 'sent'],
        ['outcome', 'reverse_flash_call', 'verified'],
      ],
    });

    // The takeover: the number verified on the attacker's main account.
    const started = await post('start', { phone_number: phone, method: 'sms' }, 'attacker', '198.51.100.1');
    expect(started.status).toBe(201);
    const [first] = suite.sb.sessionsFor(phone);
    await suite.sb.deliver(first!.request_id);
    const code = String(suite.sb.getSession(first!.request_id)!.code);
    const right = await post(
      'check',
      { verification_id: started.body.verification_id, code },
      'attacker',
      '198.51.100.1',
    );
    expect(right.body.verified).toBe(true);
    const trail = async () =>
      (await history.list({ phoneNumber: phone }))
        .filter((e) => e.owner === 'attacker')
        .map((e) => [e.kind, e.check ?? e.status]);
    expect(await trail()).toEqual([
      ['start', 'sent'],
      ['check', 'right'],
      ['outcome', 'verified'],
    ]);

    // Covering it: other accounts start the number within the limits, and their sessions fail.
    let admitted = 0;
    for (let hour = 0; hour < 10 && admitted < 120; hour++) {
      await suite.sb.advance(HOUR);
      for (let i = 0; i < 15; i++) {
        const n = hour * 15 + i;
        const answer = await post(
          'start',
          { phone_number: phone, method: 'reverse_flash_call' },
          `sybil-${n}`,
          `203.0.${113 + (n >> 8)}.${n & 255}`,
        );
        if (answer.status !== 201) continue;
        admitted += 1;
        const pending = suite.sb.sessionsFor(phone).find((s) => s.status === 'sent');
        await suite.sb.fail(pending!.request_id);
        await reconcilerOf(suite.host).runOnce();
      }
    }
    // The last ones' outcomes too.
    for (let i = 0; i < 3; i++) {
      await suite.sb.advance(HOUR);
      await reconcilerOf(suite.host).runOnce();
    }
    expect(admitted).toBeGreaterThanOrEqual(110);
    const kinds = (await history.list({ phoneNumber: phone })).map((e) => `${e.kind}:${e.check ?? e.status}`);
    // What the attack wrote (110 starts, about 110 failures): the free shelf is full of it.
    expect(kinds.filter((k) => k === 'outcome:failed' || k === 'start:sent').length).toBeGreaterThanOrEqual(
      95,
    );
    expect(await trail()).toEqual([
      ['start', 'sent'],
      ['check', 'right'],
      ['outcome', 'verified'],
    ]);
    // Free sessions cost their starters nothing: they push out neither a paid start and its failure,
    // nor the start of a session a reverse call verified.
    expect({ owner: await trailOf('owner'), friend: await trailOf('friend') }).toEqual(before);
  }, 120_000);
});
