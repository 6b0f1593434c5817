/**
 * Attack (lane attack-44b, re-attack of attack-44's refusal budget): the refusal-entry budget (30 per
 * caller per hour, REFUSAL_ENTRIES_PER_CALLER_HOUR) is spent per address, per network (/24, /48) and per
 * owner, and it is spent by every refusal, even one that only folds into an entry the number already
 * has (a repeat: no new entry). So a stranger sharing the victim's /24 (an office, a mobile carrier's
 * NAT pool: in practice everyone on a mobile network) spends the network's 30 in a few seconds with
 * free refusals of a number of its own, and for the rest of the hour no refusal of anyone on that
 * network is written to any number's history: the victim's own number shows nothing of what was
 * refused to the victim. The same lets an attacker keep its own refusals of a victim's number out of
 * the trail (spend the budget first on its own number, then hammer the victim's).
 *
 * Expected: a neighbour's refusals do not decide whether the victim's are written (a per-network
 * budget that one address can spend alone is not a per-caller bound). Medium (an attacker degrades
 * others' history). Failed on the code it was written against; passes since its fix.
 */
import { describe, expect, it } from '@jest/globals';
import { VerificationHistory } from '../../src/history/verification-history.service.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { call } from '../support/verification-app.js';
import { startAccountHost } from '../webhooks/harness.js';

describe('history: a neighbour on the same /24 spends the refusal budget (express)', () => {
  const suite = sandboxSuite();

  it("a victim's refused start of its own number is in the number's history after a neighbour's flood", async () => {
    suite.host = await startAccountHost('express', suite.sb, {
      balance: 1_000,
      trustProxy: true,
      module: { history: {}, limits: {}, owner: undefined },
    });
    const history = suite.host.app.get(VerificationHistory);
    const start = (phone: string, ip: string) =>
      call(
        suite.host!.url,
        'POST',
        '/verification/start',
        { phone_number: phone, method: 'sms' },
        { 'x-forwarded-for': ip },
      );

    // The neighbour: one paid start of its own number, then 40 free refusals of it (one folded entry).
    const own = '+79165550101';
    expect((await start(own, '203.0.113.5')).status).toBe(201);
    let refused = 0;
    for (let i = 0; i < 40; i++) if ((await start(own, '203.0.113.5')).status >= 400) refused += 1;
    expect(refused).toBe(40);

    // The victim, another address of the same /24, its own number: a start, then a refused repeat.
    const victim = '+79165550202';
    expect((await start(victim, '203.0.113.77')).status).toBe(201);
    const again = await start(victim, '203.0.113.77');
    expect(again.status).toBeGreaterThanOrEqual(400);

    const kinds = (await history.list({ phoneNumber: victim })).map((e) => e.kind);
    expect(kinds).toEqual(['start', 'refusal']);
  }, 60_000);
});
