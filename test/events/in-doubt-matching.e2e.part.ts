/**
 * Which remembered start a revealed session is adopted for, and what a webhook of an unknown session costs.
 * Starts in doubt of one number and method by several owners, minutes apart (all within each other's clock
 * skew window): each session goes to the start nearest its creation, whatever order their webhooks come in.
 * A webhook naming a session nobody remembers asks the API nothing while no start is in doubt; with one in
 * doubt, the API's 404 ignores it and the API's failure answers 503 (the sender retries). A start in doubt
 * lives its time-out, the session's life the host chose and the sender's late hour.
 */
import { afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { VerificationSandbox } from '../../src/testing/index.js';
import { call, type TestApp } from '../support/verification-app.js';
import {
  eventsOf,
  moduleOptions,
  nextPhone,
  payloadFor,
  postWebhook,
  settle,
  signed,
  startHost,
} from '../webhooks/harness.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

const TIMEOUT_MS = 1000;
const GET_SESSION = 'GET /v1/verify/:id';

describe('in-doubt starts: matching and the webhooks of unknown sessions', () => {
  const suite = sandboxSuite();
  let sb: VerificationSandbox;
  let host: TestApp;
  beforeAll(() => {
    sb = suite.sb;
  });
  afterEach(async () => {
    sb.clearFaults();
    await host.close();
  });
  const boot = async (expirySeconds?: number) => {
    host = await startHost('express', sb, {
      module: {
        expirySeconds,
        api: { ...moduleOptions(sb).api, timeoutMs: TIMEOUT_MS },
      },
    });
  };
  /** A start the sandbox answers past the module's time-out; resolves with its session once it exists upstream. */
  const startTooLate = async (phone: string, owner: string): Promise<string> => {
    const known = new Set(sb.sessionsFor(phone).map((s) => s.request_id));
    const created = () => sb.sessionsFor(phone).find((s) => !known.has(s.request_id));
    sb.addFault({ route: 'POST /v1/verify', kind: 'latency', latency_ms: 2500, count: 1 });
    const answer = await call(
      host.url,
      'POST',
      '/verification/start',
      { phone_number: phone, method: 'sms' },
      {
        'x-user': owner,
      },
    );
    expect(answer.status).toBe(503);
    const until = Date.now() + 5000;
    while (created() === undefined && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    return created()!.request_id;
  };
  const deliver = (requestId: string, event = 'verification.failed') =>
    postWebhook(
      `${host.url}/verification/webhooks`,
      signed(sb.demoAccount.webhookSecret, payloadFor(event, requestId), {
        timestampSeconds: Math.floor(sb.now() / 1000),
      }),
    );
  const ownerOf = (requestId: string) => host.events.find((e) => e.requestId === requestId)?.owner;

  it('three owners’ starts of one number, two minutes apart (sessions of ten minutes): each session goes to its own start, the middle one revealed first', async () => {
    // Sessions of ten minutes: all three still pending when revealed.
    await boot(600);
    const phone = nextPhone();
    const ids: string[] = [];
    for (const owner of ['owner-a', 'owner-b', 'owner-c']) {
      ids.push(await startTooLate(phone, owner));
      await sb.advance(120_000);
    }
    for (const i of [1, 2, 0]) {
      await sb.fail(ids[i]!);
      await settle(sb);
    }
    expect(ids.map((id) => [eventsOf(host, id), ownerOf(id)])).toEqual([
      [['verification.failed'], 'owner-a'],
      [['verification.failed'], 'owner-b'],
      [['verification.failed'], 'owner-c'],
    ]);
  });

  it('a webhook of an unknown session asks the API nothing while no start is in doubt; with one in doubt, a 404 is ignored and a failing API answers 503', async () => {
    await boot();
    const stranger = '00000000-0000-4000-8000-00000000d0b7';
    sb.resetRequestCounts();
    expect((await deliver(stranger)).body).toEqual({ received: true, result: 'ignored' });
    expect(sb.requestCount(GET_SESSION)).toBe(0);

    const own = await startTooLate(nextPhone(), 'owner-d');
    // Its own webhook is lost: the one delivered below is the sender's retry.
    sb.addFault({ webhooks: { drop_next: 1 } });
    await sb.fail(own);
    await settle(sb);
    sb.resetRequestCounts();
    expect((await deliver(stranger)).body).toEqual({ received: true, result: 'ignored' });
    expect(sb.requestCount(GET_SESSION)).toBe(1);
    sb.addFault({ route: 'GET /v1/verify/:id', kind: 'status', status: 500, count: 1 });
    expect((await deliver(own)).status).toBe(503);
    expect(eventsOf(host, own)).toEqual([]);
    // The sender's retry, the API answering again, adopts it.
    expect((await deliver(own)).body).toEqual({ received: true, result: 'processed' });
    expect(ownerOf(own)).toBe('owner-d');
  });

  it('sessions of five minutes: the start stays in doubt its time-out, the five minutes and the late hour, not ten minutes and the hour', async () => {
    await boot(300);
    const [kept, lost] = [
      await startTooLate(nextPhone(), 'owner-e'),
      await startTooLate(nextPhone(), 'owner-f'),
    ];
    // Every webhook of their expiry is lost: only the sender's late retries reveal the sessions.
    sb.addFault({ webhooks: { drop_next: 1000 } });
    await sb.advance(300_000 + 3_600_000 - 1_000);
    await settle(sb);
    sb.clearFaults();
    expect((await deliver(kept, 'verification.expired')).body).toEqual({
      received: true,
      result: 'processed',
    });
    await sb.advance(TIMEOUT_MS + 1_000);
    expect((await deliver(lost, 'verification.expired')).body).toEqual({ received: true, result: 'ignored' });
    expect([ownerOf(kept), eventsOf(host, lost)]).toEqual(['owner-e', []]);
  });
});
