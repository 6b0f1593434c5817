/**
 * Attack (two owners, one number, both starts in doubt; bc1a1887's rule): during an API slowdown two people
 * start the same number with the same method (operator consent) ten milliseconds apart; both POSTs time out
 * and both sessions are created upstream a moment later, after both sends. The first webhook to come is the
 * first person's (they approved on their phone). closestStart takes "the latest start sent by its
 * creation": the second person's, sent before the creation too. So the first person's session, approved on
 * the number's phone, is adopted with the second person as its owner: `verification.verified` for the number
 * goes to someone who proved nothing; the second person's own session then goes to the first.
 *
 * Expected: a session is never handed to an owner whose start it may not be. Here each session's verified
 * event names its own owner, or (the two starts being indistinguishable by their times) neither is adopted
 * for the wrong owner: no verified event names owner-y for owner-x's session, nor owner-x for owner-y's.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { call, type TestApp } from '../support/verification-app.js';
import { nextPhone, settle, startHost, upstreamSessions } from '../webhooks/harness.js';
import { sessionIds } from '../journeys/journey-host.js';

describe('two owners of one number, both starts in doubt', () => {
  const suite = sandboxSuite();
  let host: TestApp | undefined;
  afterEach(async () => {
    suite.sb.clearFaults();
    await host?.close();
    host = undefined;
  });
  const start = (phone: string, owner: string) =>
    call(
      host!.url,
      'POST',
      '/verification/start',
      { phone_number: phone, method: 'operator_id' },
      { 'x-user': owner },
    );
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  it("the first person's approved session is not adopted with the second person as its owner", async () => {
    const sb = suite.sb;
    host = await startHost('express', sb, {
      module: {
        api: {
          baseUrl: sb.url,
          apiKey: sb.demoAccount.apiKey,
          apiSecret: sb.demoAccount.apiSecret,
          timeoutMs: 1000,
          maxRetries: 0,
        },
        limits: { spendCap: false, resendCooldownMs: false },
      },
    });
    const phone = nextPhone();
    sb.addFault({ route: 'POST /v1/verify', kind: 'latency', latency_ms: 2500, count: 2 });
    // owner-x sends at T, owner-y at T + 10 ms; the API creates both sessions at T + 20 ms (its slowdown).
    const x = start(phone, 'owner-x');
    await pause(150);
    await sb.advance(10);
    const y = start(phone, 'owner-y');
    await pause(150);
    await sb.advance(10);
    expect([(await x).status, (await y).status]).toEqual([503, 503]);
    await upstreamSessions(sb, phone, 2);
    // The sandbox created them in the order the requests came: owner-x's first.
    const [xId, yId] = sessionIds(sb, phone);

    // owner-x approves on the number's phone: its verified webhook is the first to come.
    await sb.operator(xId!, 'approve');
    await settle(sb);
    const ownerOf = (id: string) =>
      host!.events.filter((e) => e.requestId === id).map((e) => [e.event, e.owner]);
    expect(ownerOf(xId!)).not.toContainEqual(['verification.verified', 'owner-y']);
    await sb.operator(yId!, 'approve');
    await settle(sb);
    expect(ownerOf(yId!)).not.toContainEqual(['verification.verified', 'owner-x']);
  }, 30_000);
});
