/**
 * `limits.freeStartPerCaller` per client key, network and owner, each: a network is a /24 (IPv4) or a
 * /48 (IPv6), as for the method figures' givers, so that the addresses of one network share one
 * free budget; another network keeps its own. A proof gives its point back; one the store fails to give
 * back is told in the host's log and stays counted.
 */
import { describe, expect, it } from '@jest/globals';
import { MemoryStore } from '../../src/store/memory.store.js';
import { VerificationStoreUnavailableError } from '../../src/store/store-unavailable.error.js';
import { CapturingLogger } from '../support/log-capture.js';
import { eventually } from '../support/redis-server.js';
import { call, ONE_PLATFORM } from '../support/verification-app.js';
import {
  freshPhone,
  protectedHost,
  protectionFixture,
  startFrom,
  withStoreMethod,
} from './protection-host.js';

describe.each(ONE_PLATFORM)('the free-start budget of a network (%s)', (platform) => {
  const fx = protectionFixture();

  it.each([
    ['IPv4 /24', (i: number) => `203.0.113.${10 + i}`, '203.0.114.10'],
    ['IPv6 /48', (i: number) => `2001:db8:77:${i + 1}::1`, '2001:db8:78:1::1'],
  ])('%s: distinct addresses share it; another network is untouched', async (_, address, other) => {
    fx.host = await protectedHost(fx.sb, platform, {
      freeStartPerCaller: { points: 3, windowMs: 600_000 },
    });
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++)
      statuses.push((await startFrom(fx.host, address(i), freshPhone(), 'reverse_flash_call')).status);
    expect(statuses).toEqual([201, 201, 201, 429]);
    expect((await startFrom(fx.host, other, freshPhone(), 'reverse_flash_call')).status).toBe(201);
  });

  it.each([
    ['the pumping defence on', {}],
    ['the pumping defence off', { pumping: { mode: 'off' as const } }],
  ])(
    'a start its user proves gives its point back: a network whose users complete keeps its budget, one whose starts go nowhere does not (%s)',
    async (_, limits) => {
      fx.host = await protectedHost(fx.sb, platform, {
        freeStartPerCaller: { points: 3, windowMs: 600_000 },
        ...limits,
      });
      const host = fx.host;
      const answers: number[] = [];
      // Ten users of one /24, one after another, each placing the call and reading the outcome.
      for (let i = 0; i < 10; i++) {
        const ip = `203.0.113.${10 + i}`;
        const phone = freshPhone();
        const r = await startFrom(host, ip, phone, 'reverse_flash_call');
        answers.push(r.status);
        if (r.status !== 201) continue;
        await fx.sb.call(fx.sb.sessionsFor(phone).at(-1)!.request_id, phone);
        await fx.sb.advance(1_500);
        const read = await call(
          host.url,
          'GET',
          `/verification/status/${String(r.body.verification_id)}`,
          undefined,
          {
            'x-forwarded-for': ip,
          },
        );
        expect(read.body.status).toBe('verified');
      }
      expect(answers).toEqual(Array(10).fill(201));
      // Starts nobody completes, from the same /24: its 3 and no more.
      const abandoned: number[] = [];
      for (let i = 0; i < 4; i++)
        abandoned.push(
          (await startFrom(host, `203.0.113.${100 + i}`, freshPhone(), 'reverse_flash_call')).status,
        );
      expect(abandoned).toEqual([201, 201, 201, 429]);
    },
  );

  it('a proof the store fails to give back is logged with its error, and the point stays counted (the safe side)', async () => {
    const failing = { on: false };
    const store = withStoreMethod(
      new MemoryStore({ clock: () => fx.sb.now() }),
      'get',
      (target) => async (key) => {
        if (failing.on && key.startsWith('protect:free-start-proof:'))
          throw new VerificationStoreUnavailableError('get', 'connection lost');
        return target.get(key);
      },
    );
    const logger = new CapturingLogger();
    fx.host = await protectedHost(
      fx.sb,
      platform,
      { freeStartPerCaller: { points: 1, windowMs: 600_000 }, pumping: { mode: 'off' } },
      { store },
      { logger },
    );
    const phone = freshPhone();
    const started = await startFrom(fx.host, '203.0.113.10', phone, 'reverse_flash_call');
    expect(started.status).toBe(201);
    await fx.sb.call(fx.sb.sessionsFor(phone).at(-1)!.request_id, phone);
    failing.on = true;
    const read = await call(
      fx.host.url,
      'GET',
      `/verification/status/${String(started.body.verification_id)}`,
    );
    expect(read.body.status).toBe('verified');
    const giving = 'free starts: a proved start could not give its points back';
    await eventually(async () => {
      expect(logger.lines.filter((line) => line.includes(giving))).toHaveLength(1);
    }, 2000);
    expect(logger.lines.find((line) => line.includes(giving))).toMatch(
      /VerificationStoreUnavailableError.*connection lost/,
    );
    failing.on = false;
    expect((await startFrom(fx.host, '203.0.113.11', freshPhone(), 'reverse_flash_call')).status).toBe(429);
  });
});
