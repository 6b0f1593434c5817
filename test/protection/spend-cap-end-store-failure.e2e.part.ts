/**
 * A session's end settles its spend reservation (ProtectionEvents → SpendCap.ended) after the route that
 * learned the end has answered. On a store that fails that settling, the host's process is told in its log
 * and nothing is left unhandled: an unhandled rejection ends a Node process that runs with the default
 * `--unhandled-rejections=throw`. On the module's MemoryStore and on a RedisStore alike.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { VerificationStoreUnavailableError } from '../../src/store/store-unavailable.error.js';
import type { VerificationStore } from '../../src/store/verification-store.interface.js';
import { CapturingLogger } from '../support/log-capture.js';
import { eventually } from '../support/redis-server.js';
import { call, ONE_PLATFORM } from '../support/verification-app.js';
import {
  freshIp,
  freshPhone,
  memoryAndRedis,
  protectedHost,
  protectionFixture,
  startFrom,
  withStoreMethod,
} from './protection-host.js';

const SETTLING = 'spend cap: an ended session could not be settled';

/** `inner`, whose reads of open spend reservations fail while `failing.on`. */
const failingReservationReads = (inner: VerificationStore, failing: { on: boolean }): VerificationStore =>
  withStoreMethod(inner, 'get', (target) => async (key) => {
    if (failing.on && key.startsWith('protect:spend-open:'))
      throw new VerificationStoreUnavailableError('get', 'connection lost');
    return target.get(key);
  });

const STORES = memoryAndRedis('cap-end');

describe.each(ONE_PLATFORM)('a session end the store fails to settle (%s)', (platform) => {
  const fx = protectionFixture();
  const opened: VerificationStore[] = [];
  afterEach(async () => {
    await fx.host?.close();
    fx.host = undefined;
    await Promise.all(opened.splice(0).map((store) => store.close()));
  });

  it.each(STORES)(
    'a failed SMS whose reservation cannot be read: the status answers, the failure is logged once, nothing is unhandled (%s)',
    async (_store, make) => {
      const inner = make(() => fx.sb.now());
      opened.push(inner);
      const failing = { on: false };
      const logger = new CapturingLogger();
      fx.host = await protectedHost(
        fx.sb,
        platform,
        { pumping: false, spendCap: { amount: 100, windowMs: 86_400_000 } },
        { store: failingReservationReads(inner, failing) },
        { logger },
      );
      const phone = freshPhone();
      const started = await startFrom(fx.host, freshIp(), phone);
      expect(started.status).toBe(201);
      const [session] = fx.sb.sessionsFor(phone);

      const unhandled: unknown[] = [];
      const note = (reason: unknown): void => void unhandled.push(reason);
      process.on('unhandledRejection', note);
      try {
        failing.on = true;
        await fx.sb.fail(session!.request_id);
        const status = await call(
          fx.host.url,
          'GET',
          `/verification/status/${String(started.body.verification_id)}`,
        );
        expect([status.status, status.body.status]).toEqual([200, 'failed']);
        await eventually(async () => {
          expect(logger.lines.filter((line) => line.includes(SETTLING))).toHaveLength(1);
        }, 2000);
        // The line names the error, for the host to act on.
        expect(logger.lines.find((line) => line.includes(SETTLING))).toMatch(
          /VerificationStoreUnavailableError.*connection lost/,
        );
        expect(unhandled).toEqual([]);
      } finally {
        process.off('unhandledRejection', note);
      }
    },
  );
});
