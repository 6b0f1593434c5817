/**
 * A journey put back from its `journey_token` after a restart (a new MemoryStore: the store lost it)
 * answers as it did before: its device hint's exclusions still hold. And the status route and the
 * status stream's first event are one answer, with and without the token, before and after the
 * restart, on Express and Fastify. The token a status stream pushes after a switch is the owner's, as the
 * route's is: it puts the journey back after a restart.
 */
import { afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { VerificationSandbox } from '../../src/testing/index.js';
import type { VerificationModuleOptions } from '../../src/options/verification.options.js';
import { VerificationHandleCodec } from '../../src/core/verification-handle.codec.js';
import { MAX_SESSION_TTL_MS } from '../../src/core/session-record.js';
import {
  RECORD_RETENTION_MS,
  SessionRecordRepository,
} from '../../src/sessions/session-record.repository.js';
import { VerificationStore } from '../../src/store/verification-store.interface.js';
import { openSse } from '../support/sse-client.js';
import { call, ONE_PLATFORM, PLATFORMS, type Platform, type TestApp } from '../support/verification-app.js';
import { nextPhone, startHost } from '../webhooks/harness.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

describe('journey token twins', () => {
  const OWNER = { 'x-user': 'user-twins' };
  /** Desktop users get neither call: what the journey's switches may offer must leave both out. */
  const EXCLUDE: Partial<VerificationModuleOptions> = {
    orchestration: { exclude: { desktop: ['flash_call', 'reverse_flash_call'] } },
  };

  const suite = sandboxSuite();
  let sb: VerificationSandbox;
  const hosts: TestApp[] = [];
  beforeAll(async () => {
    sb = suite.sb;
  });
  afterEach(async () => {
    for (const host of hosts.splice(0)) await host.close();
  });

  const boot = async (
    platform: Platform,
    module: Partial<VerificationModuleOptions> = {},
  ): Promise<TestApp> => {
    const host = await startHost(platform, sb, { receiveWebhooks: false, module: { ...EXCLUDE, ...module } });
    hosts.push(host);
    return host;
  };
  const restart = async (host: TestApp, platform: Platform): Promise<TestApp> => {
    hosts.splice(hosts.indexOf(host), 1);
    await host.close();
    return boot(platform);
  };
  const query = (token?: string) =>
    token === undefined ? '' : `?journey_token=${encodeURIComponent(token)}`;
  const status = (host: TestApp, id: string, token?: string) =>
    call(host.url, 'GET', `/verification/status/${id}${query(token)}`, undefined, OWNER);
  const post = (host: TestApp, route: string, body: Record<string, unknown>) =>
    call(host.url, 'POST', `/verification/${route}`, body, OWNER);
  /** The stream's first status event, as a browser's EventSource reads it. */
  const streamed = async (host: TestApp, id: string, token?: string) => {
    const opened = await openSse(`${host.url}/verification/status/${id}/events${query(token)}`, OWNER);
    expect(opened.status).toBe(200);
    const [first] = await opened.stream!.statusCount(1);
    await opened.stream!.close();
    return first;
  };

  /** A desktop journey of two steps (SMS, then a messenger code), its handle and token. */
  async function desktopJourney(host: TestApp) {
    const started = await post(host, 'start', {
      phone_number: nextPhone(),
      method: 'sms',
      device: 'desktop',
    });
    expect(started.status).toBe(201);
    const id = started.body.verification_id as string;
    await sb.advance(61_000);
    const moved = await post(host, 'switch', { verification_id: id, method: 'msgr1_otp' });
    expect(moved.status).toBe(201);
    return { id, token: moved.body.journey_token as string };
  }

  describe.each(ONE_PLATFORM)('a journey put back from its token (%s)', (platform) => {
    it('a token puts back its own journey only: with another journey’s handle it is no token', async () => {
      const before = await boot(platform);
      const a = await desktopJourney(before);
      const b = await desktopJourney(before);
      const after = await restart(before, platform);
      // B's token beside A's handle: A answers from its handle alone, and B is not put back by it.
      expect((await status(after, a.id, b.token)).body).toMatchObject({
        method: 'sms',
        methods_tried: ['sms'],
      });
      expect((await status(after, b.id)).body).toMatchObject({ method: 'sms', methods_tried: ['sms'] });
      // A token that opens for nobody (garbage, or B's with a character changed) is no token either.
      const tampered = `${b.token.slice(0, 40)}${b.token[40] === 'A' ? 'B' : 'A'}${b.token.slice(41)}`;
      for (const token of ['not-a-journey-token', tampered]) {
        const answer = await status(after, b.id, token);
        expect({ status: answer.status, tried: answer.body.methods_tried }).toStrictEqual({
          status: 200,
          tried: ['sms'],
        });
      }
      expect((await status(after, b.id, b.token)).body).toMatchObject({
        methods_tried: ['sms', 'msgr1_otp'],
      });
    });

    it('keeps its steps; on a store that lost it, offers no paid step beyond them, excluded by the device or not', async () => {
      const before = await boot(platform);
      const { id, token } = await desktopJourney(before);
      const seen = (await status(before, id)).body;
      expect(seen.switch_methods).not.toContain('flash_call');
      expect(seen.switch_methods).not.toContain('reverse_flash_call');

      const after = await restart(before, platform);
      const back = (await status(after, id, token)).body;
      expect(back).toMatchObject({ method: 'msgr1_otp', methods_tried: ['sms', 'msgr1_otp'] });
      // Rebuilt from the frontend's word on a store that lost it, the journey takes no paid step beyond
      // those it has (conservative: the steps before are only the page's word), excluded or not.
      expect(back.switch_methods).toEqual([]);
      await sb.advance(61_000);
      const excluded = await post(after, 'switch', {
        verification_id: id,
        method: 'flash_call',
        journey_token: token,
      });
      expect(excluded.status).toBeGreaterThanOrEqual(400);
      const next = await post(after, 'switch', { verification_id: id, journey_token: token });
      expect(next.status).toBeGreaterThanOrEqual(400);
    });
  });

  describe.each(ONE_PLATFORM)(
    'a journey put back from its token over records the store kept (%s)',
    (platform) => {
      it("its device hint's exclusions still hold: what its switches offer and take leaves them out", async () => {
        const host = await boot(platform);
        const phone = nextPhone();
        const started = await post(host, 'start', { phone_number: phone, method: 'sms', device: 'desktop' });
        const id = started.body.verification_id as string;
        await sb.advance(61_000);
        const moved = await post(host, 'switch', { verification_id: id, method: 'msgr1_otp' });
        const token = moved.body.journey_token as string;
        const seen = (await status(host, id)).body;
        expect((seen.switch_methods as string[]).length).toBeGreaterThan(0);
        // The store lost the journey's own record (a failover that dropped a last write), not its steps'.
        const journeyId = host.app.get(VerificationHandleCodec, { strict: false }).open(id, OWNER['x-user'])!;
        await host.app
          .get<VerificationStore>(VerificationStore)
          .delete(SessionRecordRepository.journeyKey(journeyId));
        const back = (await status(host, id, token)).body;
        expect(back).toMatchObject({ method: 'msgr1_otp', methods_tried: ['sms', 'msgr1_otp'] });
        expect(back.switch_methods).toEqual(seen.switch_methods);
        expect(back.switch_methods).not.toContain('flash_call');
        expect(back.switch_methods).not.toContain('reverse_flash_call');
        await sb.advance(61_000);
        const excluded = await post(host, 'switch', {
          verification_id: id,
          method: 'flash_call',
          journey_token: token,
        });
        expect(excluded.status).toBeGreaterThanOrEqual(400);
        expect((await status(host, id, token)).body).toMatchObject({ method: 'msgr1_otp' });
      });
    },
  );

  describe.each(ONE_PLATFORM)('how long the store keeps a journey (%s)', (platform) => {
    // A journey's record holds its number: kept as long as its current step's record, not a tick longer.
    it('put back from its token: until its current session ends and the records’ retention after it, not a tick longer', async () => {
      const before = await boot(platform);
      const phone = nextPhone();
      const started = await post(before, 'start', { phone_number: phone, method: 'sms', device: 'desktop' });
      const id = started.body.verification_id as string;
      await sb.advance(61_000);
      const moved = await post(before, 'switch', { verification_id: id, method: 'msgr1_otp' });
      const token = moved.body.journey_token as string;
      const journeyId = before.app.get(VerificationHandleCodec, { strict: false }).open(id, OWNER['x-user'])!;
      const current = sb.sessionsFor(phone).find((s) => s.method === 'msgr1_otp')!;
      const endsAt = Date.parse(current.expires_at) + RECORD_RETENTION_MS;
      const after = await restart(before, platform);
      expect((await status(after, id, token)).body).toMatchObject({ methods_tried: ['sms', 'msgr1_otp'] });
      const kept = () =>
        after.app
          .get<VerificationStore>(VerificationStore)
          .get(SessionRecordRepository.journeyKey(journeyId));
      await sb.advance(endsAt - 1 - sb.now());
      expect(await kept()).not.toBeNull();
      await sb.advance(1);
      expect(await kept()).toBeNull();
    });
  });

  describe.each(PLATFORMS)("a journey whose current step's record alone the store lost (%s)", (platform) => {
    // An eviction on Redis: the journey's record and its first step's are kept, the current step's is not.
    it('the route and the stream answer the current step, rebuilt by one API read; a code checks there; no paid step more', async () => {
      const host = await boot(platform);
      const phone = nextPhone();
      const started = await post(host, 'start', { phone_number: phone, method: 'sms', device: 'desktop' });
      const id = started.body.verification_id as string;
      await sb.advance(61_000);
      const moved = await post(host, 'switch', { verification_id: id, method: 'msgr1_otp' });
      expect(moved.status).toBe(201);
      const before = (await status(host, id)).body;
      expect(before).toMatchObject({ method: 'msgr1_otp', methods_tried: ['sms', 'msgr1_otp'] });
      expect((before.switch_methods as string[]).length).toBeGreaterThan(0);
      const current = sb.sessionsFor(phone).find((s) => s.method === 'msgr1_otp')!;
      await host.app
        .get<VerificationStore>(VerificationStore)
        .delete(SessionRecordRepository.key(current.request_id));

      sb.resetRequestCounts();
      const seen = await status(host, id);
      expect(seen.status).toBe(200);
      expect(seen.body).toMatchObject({
        verification_id: id,
        method: 'msgr1_otp',
        status: before.status,
        methods_tried: ['sms', 'msgr1_otp'],
        // A journey with a rebuilt step takes no more paid steps (its steps before are not all the store's).
        switch_methods: [],
      });
      expect(sb.requestCount('GET /v1/verify/:id')).toBe(1);
      // Rebuilt once: the stream and a second read answer alike, from the store.
      expect(await streamed(host, id)).toEqual((await status(host, id)).body);
      expect(sb.requestCount('GET /v1/verify/:id')).toBe(1);

      await sb.advance(61_000);
      const refused = await post(host, 'switch', { verification_id: id, method: 'sms' });
      expect(refused.status).toBe(409);
      expect(refused.body).toMatchObject({ error_code: 'journey_limit_reached' });
      await sb.deliver(current.request_id);
      const checked = await post(host, 'check', {
        verification_id: id,
        code: sb.getSession(current.request_id)!.code!,
      });
      expect(checked.body).toMatchObject({ verification_id: id, status: 'verified', verified: true });
      expect(sb.sessionsFor(phone)).toHaveLength(2);
    });
  });

  describe.each(ONE_PLATFORM)('a token beside a journey the store still holds (%s)', (platform) => {
    // The store is the truth: a token rebuilds nothing of a journey it holds, so a current step's record the
    // store lost is the route's own rebuild, metered by the caller's status meter, token or not.
    it("a lost current step past its caller's rebuild meter is answered 429, nothing read upstream, the token given or not", async () => {
      const host = await boot(platform, { limits: {} });
      const phone = nextPhone();
      const started = await post(host, 'start', { phone_number: phone, method: 'sms', device: 'desktop' });
      const id = started.body.verification_id as string;
      await sb.advance(61_000);
      const moved = await post(host, 'switch', { verification_id: id, method: 'msgr1_otp' });
      expect(moved.status).toBe(201);
      const token = moved.body.journey_token as string;
      const current = sb.sessionsFor(phone).find((s) => s.method === 'msgr1_otp')!;
      const lose = () =>
        host.app
          .get<VerificationStore>(VerificationStore)
          .delete(SessionRecordRepository.key(current.request_id));
      await sb.advance(5_000);
      // The caller's window of reads spent on rebuilds of this very step (each lost again, as under eviction).
      let rebuilt = 0;
      for (;;) {
        await lose();
        const seen = await status(host, id);
        if (seen.status !== 200) {
          expect(seen.status).toBe(429);
          break;
        }
        expect(seen.body).toMatchObject({ method: 'msgr1_otp', methods_tried: ['sms', 'msgr1_otp'] });
        rebuilt += 1;
        expect(rebuilt).toBeLessThan(20);
      }
      expect(rebuilt).toBeGreaterThan(0);

      sb.resetRequestCounts();
      const carried = await status(host, id, token);
      expect(carried.status).toBe(429);
      expect(carried.headers.get('retry-after')).toBe('3');
      expect(carried.body).toMatchObject({ error_code: 'rate_limit_exceeded' });
      expect(sb.requestCount('GET /v1/verify/:id')).toBe(0);
      // Once the window is over, the same read rebuilds the step.
      await sb.advance(3_000);
      const again = await status(host, id, token);
      expect(again.status).toBe(200);
      expect(again.body).toMatchObject({ method: 'msgr1_otp', methods_tried: ['sms', 'msgr1_otp'] });
      expect(sb.requestCount('GET /v1/verify/:id')).toBe(1);
    });
  });

  describe.each(ONE_PLATFORM)(
    'a journey put back from its token whose current step the API does not know (%s)',
    (platform) => {
      // The journey's record is kept as long as its current step could live: its start, the longest session's
      // life (10 minutes) and the records' retention after it, not a tick less.
      it('is answered 404 not_found, and the store keeps the journey to its step’s start + 10 min + the retention', async () => {
        const host = await boot(platform);
        const phone = nextPhone();
        const started = await post(host, 'start', { phone_number: phone, method: 'sms', device: 'desktop' });
        const id = started.body.verification_id as string;
        await sb.advance(61_000);
        const switchedAt = sb.now();
        const moved = await post(host, 'switch', { verification_id: id, method: 'msgr1_otp' });
        expect(moved.status).toBe(201);
        const token = moved.body.journey_token as string;
        const journeyId = host.app.get(VerificationHandleCodec, { strict: false }).open(id, OWNER['x-user'])!;
        const current = sb.sessionsFor(phone).find((s) => s.method === 'msgr1_otp')!;
        const store = host.app.get<VerificationStore>(VerificationStore);
        // The store lost the journey's record and its current step's (the first step's is kept); the API
        // answers that step's read 404 (it no longer knows it).
        await store.delete(SessionRecordRepository.journeyKey(journeyId));
        await store.delete(SessionRecordRepository.key(current.request_id));
        sb.addFault({ route: 'GET /v1/verify/:id', kind: 'status', status: 404, count: 1 });
        const seen = await status(host, id, token);
        expect(seen.status).toBe(404);
        expect(seen.body).toMatchObject({ error_code: 'not_found' });

        const kept = () => store.get(SessionRecordRepository.journeyKey(journeyId));
        const endsAt = switchedAt + MAX_SESSION_TTL_MS + RECORD_RETENTION_MS;
        await sb.advance(endsAt - 1 - sb.now());
        expect(await kept()).not.toBeNull();
        await sb.advance(1);
        expect(await kept()).toBeNull();
      });
    },
  );

  describe.each(PLATFORMS)('the status route and the status stream answer alike (%s)', (platform) => {
    it('before a restart, and after it with and without the journey token', async () => {
      const before = await boot(platform);
      const { id, token } = await desktopJourney(before);
      for (const t of [undefined, token])
        expect(await streamed(before, id, t)).toEqual((await status(before, id, t)).body);

      const after = await restart(before, platform);
      // Without the token the restarted server knows the first step only; the stream says the same.
      const alone = (await status(after, id)).body;
      expect(alone).toMatchObject({ method: 'sms' });
      expect(await streamed(after, id)).toEqual(alone);

      const third = await restart(after, platform);
      // With it, the stream alone (no route call first) puts the journey back: the current step.
      const fromStream = await streamed(third, id, token);
      expect(fromStream).toMatchObject({ method: 'msgr1_otp', methods_tried: ['sms', 'msgr1_otp'] });
      expect((await status(third, id, token)).body).toEqual(fromStream);
      expect((await status(third, id)).body).toEqual(fromStream);
    });
  });

  describe.each(ONE_PLATFORM)('the journey_token a status stream pushes after a switch (%s)', (platform) => {
    it("opens for the stream's owner: after a restart it puts the switched journey back, as the route's token does", async () => {
      const before = await boot(platform);
      const started = await post(before, 'start', {
        phone_number: nextPhone(),
        method: 'sms',
        device: 'desktop',
      });
      expect(started.status).toBe(201);
      const id = started.body.verification_id as string;
      const opened = await openSse(`${before.url}/verification/status/${id}/events`, OWNER);
      expect(opened.status).toBe(200);
      const stream = opened.stream!;
      try {
        await stream.statusCount(1);
        await sb.advance(61_000);
        const moved = await post(before, 'switch', { verification_id: id, method: 'msgr1_otp' });
        expect(moved.status).toBe(201);
        // The page learns the switch (made in another tab) from the stream alone: its push carries the token.
        await stream.until(() => stream.statuses().some((x) => typeof x.journey_token === 'string'));
      } finally {
        await stream.close();
      }
      const pushed = stream.statuses().find((x) => typeof x.journey_token === 'string')!;
      expect(pushed).toMatchObject({ method: 'msgr1_otp' });
      const routed = (await status(before, id)).body.journey_token as string;

      const after = await restart(before, platform);
      const back = (await status(after, id, pushed.journey_token as string)).body;
      expect(back).toMatchObject({ method: 'msgr1_otp', methods_tried: ['sms', 'msgr1_otp'] });
      // The same answer as the route's token gives on a store that lost the journey too.
      const third = await restart(after, platform);
      expect((await status(third, id, routed)).body).toEqual(back);
    });
  });

  /** The journey's own sealing, its text padded with JSON whitespace to make a token of `chars` characters. */
  type Sealing = { sealText(version: number, aad: Buffer, text: string): string };
  type Opening = { openText(version: number, aad: Buffer, sealed: string): string | null };
  function paddedToken(codec: VerificationHandleCodec, token: string, owner: string, chars: number): string {
    // A journey token's associated data: its version (2), then the owner (1, its bytes).
    const aad = Buffer.concat([Buffer.of(2, 1), Buffer.from(owner, 'utf8')]);
    const text = (codec as unknown as Opening).openText(2, aad, token)!;
    // 1 version byte, a 12-byte IV and a 16-byte tag around the text; base64url without padding.
    const textBytes = Math.floor((chars * 3) / 4) - 29;
    return (codec as unknown as Sealing).sealText(2, aad, text + ' '.repeat(textBytes - text.length));
  }

  describe.each(ONE_PLATFORM)('the length of a journey_token on the status route (%s)', (platform) => {
    it('a token of exactly 2048 characters puts the journey back; a longer one is no token', async () => {
      const host = await boot(platform);
      const { id, token } = await desktopJourney(host);
      const owner = OWNER['x-user'];
      const codec = host.app.get(VerificationHandleCodec, { strict: false });
      const journeyId = codec.open(id, owner)!;
      const atBound = paddedToken(codec, token, owner, 2048);
      const over = paddedToken(codec, token, owner, 2050);
      expect([atBound.length, over.length]).toEqual([2048, 2050]);
      // The store lost the journey's own record: only a token it reads puts the switch back.
      const lose = () =>
        host.app
          .get<VerificationStore>(VerificationStore)
          .delete(SessionRecordRepository.journeyKey(journeyId));

      await lose();
      expect((await status(host, id, over)).body).toMatchObject({ method: 'sms', methods_tried: ['sms'] });
      await lose();
      const back = await status(host, id, atBound);
      expect(back.status).toBe(200);
      expect(back.body).toMatchObject({ method: 'msgr1_otp', methods_tried: ['sms', 'msgr1_otp'] });
    });
  });

  describe.each(PLATFORMS)(
    'each event a status stream pushes is the status route’s answer (%s)',
    (platform) => {
      it('across a switch and the outcome, for a stream opened without and one with the journey token', async () => {
        const host = await boot(platform);
        const phone = nextPhone();
        const started = await post(host, 'start', { phone_number: phone, method: 'sms', device: 'desktop' });
        expect(started.status).toBe(201);
        const id = started.body.verification_id as string;
        const events = `${host.url}/verification/status/${id}/events`;
        const plain = (await openSse(events, OWNER)).stream!;
        let carried: Awaited<ReturnType<typeof openSse>>['stream'];
        try {
          expect((await plain.statusCount(1))[0]).toEqual((await status(host, id)).body);
          await sb.advance(61_000);
          const moved = await post(host, 'switch', { verification_id: id, method: 'msgr1_otp' });
          expect(moved.status).toBe(201);
          const token = moved.body.journey_token as string;
          // The switch, pushed: the route's answer (the handle's id, the new step, its token) field for field.
          const [, switched] = await plain.statusCount(2);
          expect(switched).toEqual((await status(host, id)).body);
          expect(switched).toMatchObject({ verification_id: id, method: 'msgr1_otp', journey_token: token });
          carried = (await openSse(`${events}?journey_token=${encodeURIComponent(token)}`, OWNER)).stream!;
          expect((await carried.statusCount(1))[0]).toEqual((await status(host, id, token)).body);

          // The new step's code, checked on the route: both streams push the outcome the route answers, and end.
          const second = sb.sessionsFor(phone).find((s) => s.method === 'msgr1_otp')!;
          await sb.deliver(second.request_id);
          const code = String(sb.getSession(second.request_id)!.code);
          const checked = await post(host, 'check', { verification_id: id, code, journey_token: token });
          expect(checked.body).toMatchObject({ verified: true });
          await plain.ends();
          await carried.ends();
          const verified = (await status(host, id, token)).body;
          expect(verified).toMatchObject({ status: 'verified', method: 'msgr1_otp', verification_id: id });
          expect(plain.statuses().at(-1)).toEqual(verified);
          expect(carried.statuses().at(-1)).toEqual(verified);
          expect(plain.statuses().map((x) => x.status)).toEqual(['sent', 'sent', 'verified']);
        } finally {
          plain.close();
          carried?.close();
        }
      });
    },
  );
});
