/**
 * `POST /{prefix}/cancel`: the journey ends for the frontend (`canceled`), nothing more is polled
 * for it, and an outcome that still arrives by webhook is recorded and emitted to listeners once.
 */
import { describe, expect, it } from '@jest/globals';
import { VerificationService } from '../../src/verification/verification.service.js';
import {
  RECORD_RETENTION_MS,
  SessionRecordRepository,
} from '../../src/sessions/session-record.repository.js';
import { VerificationStore } from '../../src/store/verification-store.interface.js';
import { CapturingLogger } from '../support/log-capture.js';
import { slowWritesStore } from '../support/round-trip-store.js';
import { openSse } from '../support/sse-client.js';
import { PLATFORMS } from '../support/verification-app.js';
import {
  cancel,
  check,
  freshPhone,
  journeyFixture,
  journeyHost,
  OWNER,
  problem,
  reconciler,
  sessionIds,
  start,
  status,
  switchMethod,
} from './journey-host.js';

describe.each(PLATFORMS)('journeys: cancel (%s)', (platform) => {
  const fx = journeyFixture();

  it('cancel then a late webhook: canceled for the frontend, nothing more polled, the listener gets the outcome once', async () => {
    const host = await journeyHost(fx, platform);
    const phone = freshPhone();
    const first = await start(host, { phone_number: phone, method: 'sms' });
    const id = first.body.verification_id as string;
    await fx.sb.advance(5000);
    expect((await switchMethod(host, id)).body.method).toBe('reverse_flash_call');
    const [smsId, callId] = sessionIds(fx.sb, phone);
    const queue = reconciler(host);
    expect(await queue.pending()).toBe(2);
    const opened = await openSse(`${host.url}/verification/status/${id}/events`, { 'x-user': OWNER });
    const stream = opened.stream!;
    try {
      await stream.statusCount(1);
      const res = await cancel(host, id);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ verification_id: id, status: 'canceled' });
      // The stream tells the page, and ends.
      await stream.ends();
      expect(stream.statuses().at(-1)).toMatchObject({ status: 'canceled', awaiting_code: false });
    } finally {
      stream.close();
    }
    // Both pending sessions left the reconciler's queue.
    expect(await queue.pending()).toBe(0);

    fx.sb.resetRequestCounts();
    const answer = await status(host, id);
    expect(answer.body).toMatchObject({
      status: 'canceled',
      method: 'reverse_flash_call',
      awaiting_code: false,
      methods_tried: ['sms', 'reverse_flash_call'],
      switch_methods: [],
    });
    expect(answer.body).not.toHaveProperty('fallback_available_at');
    await fx.sb.advance(30_000);
    await queue.runOnce();
    await status(host, id);
    expect(fx.sb.requestCount('GET /v1/verify/:id')).toBe(0);
    // Cancel again is the same answer; nothing else moves a canceled journey.
    expect((await cancel(host, id)).body).toEqual({ verification_id: id, status: 'canceled' });
    for (const res of [await switchMethod(host, id), await check(host, id, '1234')]) {
      expect(problem(res)).toMatchObject({ status: 409, error_code: 'not_pending' });
      expect(res.body.verification_status).toBe('canceled');
    }
    expect(fx.sb.requestCount()).toBe(0);

    // The user calls all the same: the webhook is confirmed (one GET) and the outcome emitted once.
    await fx.sb.call(callId!, phone);
    await fx.sb.webhooksIdle();
    expect(fx.sb.requestCount('GET /v1/verify/:id')).toBe(1);
    expect(host.events.filter((e) => e.requestId === callId).map((e) => e.event)).toEqual([
      'verification.verified',
    ]);
    expect(host.events.find((e) => e.requestId === callId)!.methodsTried).toEqual([
      'sms',
      'reverse_flash_call',
    ]);
    expect((await status(host, id)).body.status).toBe('canceled');
    await fx.sb.advance(60_000);
    await queue.runOnce();
    await status(host, id);
    expect(fx.sb.requestCount('GET /v1/verify/:id')).toBe(1);
    expect(host.events.filter((e) => e.requestId === callId)).toHaveLength(1);
    expect(host.events.filter((e) => e.requestId === smsId)).toEqual([]);
    // For the host too the journey is over: no verified number behind the handle.
    await expect(host.app.get(VerificationService).getVerifiedPhone(id, OWNER)).resolves.toBeNull();
  });

  it.each(['failed', 'lost by the store'] as const)(
    'a cancel reads fresh only the steps still pending: not one whose record is %s',
    async (first) => {
      const host = await journeyHost(fx, platform);
      const phone = freshPhone();
      const started = await start(host, { phone_number: phone, method: 'sms' });
      const id = started.body.verification_id as string;
      const [smsId] = sessionIds(fx.sb, phone);
      if (first === 'failed') {
        await fx.sb.fail(smsId!);
        await fx.sb.webhooksIdle();
      }
      await fx.sb.advance(5000);
      expect((await switchMethod(host, id)).status).toBe(201);
      expect((await status(host, id)).body.methods_tried).toEqual(['sms', 'reverse_flash_call']);
      // An eviction on Redis: the journey's record and its current step's are kept, the first step's is not.
      if (first === 'lost by the store')
        await host.app.get<VerificationStore>(VerificationStore).delete(SessionRecordRepository.key(smsId!));
      fx.sb.resetRequestCounts();
      expect((await cancel(host, id)).body).toEqual({ verification_id: id, status: 'canceled' });
      expect(fx.sb.requestCount('GET /v1/verify/:id')).toBe(1);
      expect((await status(host, id)).body).toMatchObject({
        status: 'canceled',
        method: 'reverse_flash_call',
      });
    },
  );

  it('a cancel whose fresh read of the pending steps fails upstream: canceled on the stored records, both steps leave the queue, a warning names each', async () => {
    const logger = new CapturingLogger();
    const host = await journeyHost(fx, platform, { logLevels: ['log', 'warn', 'error'] }, {}, { logger });
    const phone = freshPhone();
    const first = await start(host, { phone_number: phone, method: 'sms' });
    const id = first.body.verification_id as string;
    await fx.sb.advance(5000);
    expect((await switchMethod(host, id)).body.method).toBe('reverse_flash_call');
    const [smsId, callId] = sessionIds(fx.sb, phone);
    const queue = reconciler(host);
    expect(await queue.pending()).toBe(2);
    fx.sb.addFault({ route: 'GET /v1/verify/:id', kind: 'status', status: 503, count: 0 });
    try {
      fx.sb.resetRequestCounts();
      const res = await cancel(host, id);
      expect(res.body).toEqual({ verification_id: id, status: 'canceled' });
      expect(fx.sb.requestCount('GET /v1/verify/:id')).toBe(2);
    } finally {
      fx.sb.clearFaults();
    }
    // With webhooks, nothing more is polled for either step.
    expect(await queue.pending()).toBe(0);
    const warned = logger.lines.filter((l) => l.startsWith('warn status served from the last known state'));
    expect(warned).toHaveLength(2);
    for (const requestId of [smsId!, callId!])
      expect(warned.filter((l) => l.includes(`request_id=${requestId.slice(0, 8)}`))).toHaveLength(1);
    expect((await status(host, id)).body).toMatchObject({ status: 'canceled', method: 'reverse_flash_call' });
  });

  it('a cancel while the reconciler is reading the session: its next look takes it out of the queue, asking nothing upstream', async () => {
    const host = await journeyHost(fx, platform);
    const phone = freshPhone();
    const first = await start(host, { phone_number: phone, method: 'sms' });
    const id = first.body.verification_id as string;
    const queue = reconciler(host);
    await fx.sb.advance(30_000);
    // The reconciler's read of the SMS is held upstream while the page cancels.
    fx.sb.resetRequestCounts();
    fx.sb.addFault({ route: 'GET /v1/verify/:id', kind: 'latency', latency_ms: 300 });
    const pass = queue.runOnce();
    while (fx.sb.requestCount('GET /v1/verify/:id') === 0) await new Promise((r) => setTimeout(r, 5));
    expect((await cancel(host, id)).body).toEqual({ verification_id: id, status: 'canceled' });
    expect(await pass).toBe(1);
    // That look put the session back in the queue, at its next poll.
    expect(await queue.pending()).toBe(1);
    fx.sb.resetRequestCounts();
    await fx.sb.advance(60_000);
    expect(await queue.runOnce()).toBe(1);
    // Webhooks report its outcome: the canceled session leaves without a poll.
    expect(fx.sb.requestCount('GET /v1/verify/:id')).toBe(0);
    expect(await queue.pending()).toBe(0);
  });

  it('a start after cancel is not handed the canceled session back: the same method waits out its cooldown', async () => {
    const host = await journeyHost(fx, platform, {
      limits: { startPerPhoneAndCaller: false, startPerPhone: false },
    });
    const phone = freshPhone();
    const first = await start(host, { phone_number: phone, method: 'sms' });
    expect(first.status).toBe(201);
    expect((await cancel(host, first.body.verification_id)).body.status).toBe('canceled');
    // Within the cooldown an identical start would resume the pending session: not a canceled one.
    const again = await start(host, { phone_number: phone, method: 'sms' });
    expect(problem(again)).toMatchObject({ status: 429, error_code: 'rate_limit_exceeded' });
    expect(again.body.reason).toBe('resend_cooldown');
    await fx.sb.advance(61_000);
    const fresh = await start(host, { phone_number: phone, method: 'sms' });
    expect(fresh.status).toBe(201);
    expect(fresh.body.resumed).toBe(false);
    expect(fresh.body.verification_id).not.toBe(first.body.verification_id);
    expect(sessionIds(fx.sb, phone)).toHaveLength(2);
  });

  it('a journey of one step is canceled the same way; a verified one is not (409 not_pending)', async () => {
    const host = await journeyHost(fx, platform);
    const phone = freshPhone();
    const single = await start(host, { phone_number: phone, method: 'flash_call' });
    expect((await cancel(host, single.body.verification_id)).body.status).toBe('canceled');
    expect(await reconciler(host).pending()).toBe(0);
    // A late delivery is not followed: the canceled journey shows no code field.
    await fx.sb.deliver(sessionIds(fx.sb, phone)[0]!);
    expect((await status(host, single.body.verification_id)).body).toMatchObject({
      status: 'canceled',
      awaiting_code: false,
    });

    const other = freshPhone();
    const verified = await start(host, { phone_number: other, method: 'reverse_flash_call' });
    await fx.sb.call(sessionIds(fx.sb, other)[0]!, other);
    await fx.sb.webhooksIdle();
    const refused = await cancel(host, verified.body.verification_id);
    expect(problem(refused)).toMatchObject({ status: 409, error_code: 'not_pending' });
    expect(refused.body.verification_status).toBe('verified');
    expect((await status(host, verified.body.verification_id)).body.status).toBe('verified');
  });

  it('a cancel answers once its journey is saved: on a slow store, the status read right after it is canceled, and a second cancel is too', async () => {
    const slow = slowWritesStore(
      () => fx.sb.now(),
      (method, [key]) => method === 'set' && String(key).startsWith('journey:'),
      { once: true },
    );
    try {
      const host = await journeyHost(fx, platform, { store: slow.store });
      const id = (await start(host, { phone_number: freshPhone(), method: 'sms' })).body.verification_id;
      expect((await cancel(host, id)).body).toEqual({ verification_id: id, status: 'canceled' });
      expect(slow.held()).toBe(1);
      expect((await status(host, id)).body).toMatchObject({ status: 'canceled', awaiting_code: false });
      expect((await cancel(host, id)).body).toEqual({ verification_id: id, status: 'canceled' });
    } finally {
      slow.land();
      await Promise.all(fx.hosts.splice(0).map((host) => host.close()));
      await slow.inner.close();
    }
  });

  it("a canceled journey answers canceled as long as its session's record is kept: a tick before that end", async () => {
    const host = await journeyHost(fx, platform);
    const started = await start(host, { phone_number: freshPhone(), method: 'sms' });
    const id = started.body.verification_id as string;
    expect((await cancel(host, id)).body.status).toBe('canceled');
    const expiresAt = Date.parse(started.body.expires_at as string);
    await fx.sb.advance(expiresAt + RECORD_RETENTION_MS - 1 - fx.sb.now());
    expect((await status(host, id)).body).toMatchObject({ status: 'canceled', awaiting_code: false });
  });

  it('a canceled journey offers no code entry: its status answer drops awaiting_code and the code length range its pending SMS had', async () => {
    const host = await journeyHost(fx, platform);
    const id = (await start(host, { phone_number: freshPhone(), method: 'sms' })).body.verification_id;
    const before = (await status(host, id)).body;
    expect(before).toMatchObject({ status: 'sent', awaiting_code: true });
    expect(before.code_length_min).toBe(before.code_length_max);
    expect((await cancel(host, id)).body.status).toBe('canceled');
    const after = (await status(host, id)).body;
    expect(after).toMatchObject({ status: 'canceled', awaiting_code: false });
    expect(after).not.toHaveProperty('code_length_min');
    expect(after).not.toHaveProperty('code_length_max');
  });
});
