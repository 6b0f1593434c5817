/**
 * Cancel in polling mode (no webhooks: only polls and the reconciler learn outcomes). A cancel never
 * loses an outcome: it looks once more at the API before letting a session go, and a session the
 * API may still verify (and charge) after the cancel is followed to its end at the lazy pace.
 */
import { afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { VerificationService } from '../../src/verification/verification.service.js';
import type { VerificationSandbox } from '../../src/testing/index.js';
import { call, PLATFORMS, type TestApp } from '../support/verification-app.js';
import { eventsOf, lastEventOf, nextPhone, reconcilerOf, startHost } from '../webhooks/harness.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

const LAZY_MS = 15_000;

describe.each(PLATFORMS)('cancel without webhooks (%s)', (platform) => {
  const suite = sandboxSuite();
  let sb: VerificationSandbox;
  let host: TestApp | undefined;

  beforeAll(async () => {
    sb = suite.sb;
  });
  afterEach(async () => {
    await host?.close();
    host = undefined;
  });

  const boot = async () => {
    host = await startHost(platform, sb, { module: { webhooks: {} }, receiveWebhooks: false });
    return host;
  };
  const post = (route: string, body: Record<string, unknown>) =>
    call(host!.url, 'POST', `/verification/${route}`, body, { 'x-user': 'user-1' });
  const status = (id: string) =>
    call(host!.url, 'GET', `/verification/status/${id}`, undefined, { 'x-user': 'user-1' });

  it('a cancel just after the user completed: the verified outcome is seen, emitted once, and the cancel refused', async () => {
    await boot();
    const phone = nextPhone();
    const started = await post('start', { phone_number: phone, method: 'reverse_flash_call' });
    const id = started.body.verification_id as string;
    // The page polls (the status is fresh for a poll interval), then the user calls, then cancels.
    expect((await status(id)).body.status).toBe('sent');
    const [requestId] = sb.sessionsFor(phone).map((s) => s.request_id);
    await sb.call(requestId!, phone);
    const refused = await post('cancel', { verification_id: id });
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ error_code: 'not_pending', verification_status: 'verified' });
    expect(eventsOf(host!, requestId!)).toEqual(['verification.verified']);
    expect(await host!.app.get(VerificationService).getVerifiedPhone(id, 'user-1')).toBe(phone);
    await sb.advance(LAZY_MS);
    await reconcilerOf(host!).runOnce();
    expect(eventsOf(host!, requestId!)).toEqual(['verification.verified']);
    expect(await reconcilerOf(host!).pending()).toBe(0);
  });

  it('getVerifiedPhone asked before any poll: its read learns the outcome, emitted once with the source `poll`', async () => {
    await boot();
    const phone = nextPhone();
    const started = await post('start', { phone_number: phone, method: 'reverse_flash_call' });
    const id = started.body.verification_id as string;
    const [requestId] = sb.sessionsFor(phone).map((s) => s.request_id);
    await sb.call(requestId!, phone);
    const service = host!.app.get(VerificationService);
    expect(await service.getVerifiedPhone(id, 'user-1')).toBe(phone);
    expect(eventsOf(host!, requestId!)).toEqual(['verification.verified']);
    expect(lastEventOf(host!, requestId!)?.source).toBe('poll');
    // Seen verified, it is answered from its record: no event more, no read more.
    sb.resetRequestCounts();
    expect(await service.getVerifiedPhone(id, 'user-1')).toBe(phone);
    expect(sb.requestCount('GET /v1/verify/:id')).toBe(0);
    expect(eventsOf(host!, requestId!)).toEqual(['verification.verified']);
  });

  it('the operator approves just after the cancel: the reconciler follows the session at the lazy pace and the host hears of it', async () => {
    await boot();
    const phone = nextPhone();
    const started = await post('start', { phone_number: phone, method: 'operator_id' });
    const id = started.body.verification_id as string;
    expect((await post('cancel', { verification_id: id })).body).toEqual({
      verification_id: id,
      status: 'canceled',
    });
    const [requestId] = sb.sessionsFor(phone).map((s) => s.request_id);
    sb.resetRequestCounts();
    // The look already scheduled happens; after it, not at the spec's pace: nobody waits on it.
    for (let i = 0; i < 3; i++) {
      await sb.advance(5_000);
      await reconcilerOf(host!).runOnce();
    }
    expect(sb.requestCount('GET /v1/verify/:id')).toBe(1);
    expect(await reconcilerOf(host!).pending()).toBe(1);
    await sb.operator(requestId!, 'approve');
    await sb.advance(LAZY_MS);
    await reconcilerOf(host!).runOnce();
    expect(sb.requestCount('GET /v1/verify/:id')).toBe(2);
    expect(eventsOf(host!, requestId!)).toEqual(['verification.verified']);
    expect(lastEventOf(host!, requestId!)?.source).toBe('poll');
    expect(await reconcilerOf(host!).pending()).toBe(0);
    // For the frontend and getVerifiedPhone the journey stays canceled.
    expect((await status(id)).body.status).toBe('canceled');
  });

  it("a canceled journey's switched-to step is followed at the lazy pace too, not at its method's", async () => {
    await boot();
    const phone = nextPhone();
    const started = await post('start', { phone_number: phone, method: 'sms' });
    const id = started.body.verification_id as string;
    expect((await post('switch', { verification_id: id, method: 'operator_id' })).status).toBe(201);
    expect((await post('cancel', { verification_id: id })).body.status).toBe('canceled');
    sb.resetRequestCounts();
    // Five spec intervals (2.5 s each): each step has the look already scheduled, then none until 15 s on.
    for (let i = 0; i < 5; i++) {
      await sb.advance(2_500);
      await reconcilerOf(host!).runOnce();
    }
    expect(sb.requestCount('GET /v1/verify/:id')).toBe(2);
    expect(await reconcilerOf(host!).pending()).toBe(2);
    // The operator approves the switched-to step: its next lazy look finds it, and the host hears of it.
    const operatorStep = sb.sessionsFor(phone).find((s) => s.method === 'operator_id')!;
    await sb.operator(operatorStep.request_id, 'approve');
    await sb.advance(LAZY_MS);
    await reconcilerOf(host!).runOnce();
    expect(eventsOf(host!, operatorStep.request_id)).toEqual(['verification.verified']);
    expect((await status(id)).body.status).toBe('canceled');
  });
  // Only the page's polls learn the outcome here (no webhooks, no reconciler): a journey with a record of its
  // own (a start with a device hint keeps one, a switch adds a step) is read from the API like a lone session.
  it.each([
    ['an auto start with a device hint', 'auto'],
    ['a switched journey', 'switch'],
  ])("%s: the next poll interval's poll reads the current step from the API", async (_name, shape) => {
    host = await startHost(platform, sb, {
      module: { webhooks: {}, reconcile: { enabled: false } },
      receiveWebhooks: false,
    });
    const phone = nextPhone();
    const started =
      shape === 'auto'
        ? await post('start', { phone_number: phone, method: 'auto', device: 'mobile' })
        : await post('start', { phone_number: phone, method: 'flash_call' });
    expect(started.status).toBe(201);
    const id = started.body.verification_id as string;
    if (shape === 'switch') {
      const switched = await post('switch', { verification_id: id, method: 'reverse_flash_call' });
      expect(switched.status).toBe(201);
    }
    expect((await status(id)).body.status).toBe('sent');
    const current = sb.sessionsFor(phone).find((s) => s.method === 'reverse_flash_call')!;
    await sb.call(current.request_id, phone);
    // Within the poll interval the page is answered from the last read; past it, from the API.
    await sb.advance(5_000);
    expect((await status(id)).body).toMatchObject({ status: 'verified', verification_id: id });
    // The host hears it from the poll that saw it.
    expect(lastEventOf(host, current.request_id)).toMatchObject({
      event: 'verification.verified',
      source: 'poll',
    });
  });
});
