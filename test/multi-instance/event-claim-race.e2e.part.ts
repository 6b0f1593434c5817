/**
 * The event claims are atomic: many observers of one outcome at the same moment, on two instances
 * (two RedisStore connections on one prefix) or inside one (one MemoryStore), emit it once in all.
 * The same holds for a journey's `verification.verified`: two of its steps verified at once give
 * one `verified` and one `verified_again`, never two `verified`. A claim made check-then-set would let
 * several observers pass the check before any of them set it.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { EventEmitter2 } from '@nestjs/event-emitter';
import type { VerificationSession } from '../../src/api/api.types.js';
import type { JourneyRecord } from '../../src/core/journey.js';
import type { SessionRecord } from '../../src/core/session-record.js';
import { VerificationHandleCodec } from '../../src/core/verification-handle.codec.js';
import { VerificationLogger } from '../../src/observability/verification-logger.js';
import { resolveVerificationOptions } from '../../src/options/verification.options.js';
import {
  RECORD_RETENTION_MS,
  SessionRecordRepository,
} from '../../src/sessions/session-record.repository.js';
import { SubjectIndex } from '../../src/sessions/subject-index.js';
import { VerificationTracker } from '../../src/sessions/verification.tracker.js';
import { MemoryStore } from '../../src/store/memory.store.js';
import { RedisStore } from '../../src/store/redis.store.js';
import type { VerificationStore } from '../../src/store/verification-store.interface.js';
import { sharedRedisUrl } from '../support/redis-server.js';
import { uniqueKeyPrefix, untilAnswering } from './deployment.js';
import { telemetryOf } from '../support/telemetry.js';

const NOW = 1_800_000_000_000;
const OBSERVERS = 10;

interface Instance {
  tracker: VerificationTracker;
  records: SessionRecordRepository;
  emitted: { event: string; requestId: string; verificationId: string }[];
}

function instanceOn(store: VerificationStore): Instance {
  const options = resolveVerificationOptions({
    api: { baseUrl: 'http://127.0.0.1:9', apiKey: 'key', apiSecret: 'secret-secret-secret' },
    clock: () => NOW,
    store,
  });
  const logger = new VerificationLogger({ ...options, logLevels: false });
  const emitter = new EventEmitter2();
  const emitted: Instance['emitted'] = [];
  emitter.onAny((event, payload: { requestId: string; verificationId: string }) => {
    emitted.push({
      event: String(event),
      requestId: payload.requestId,
      verificationId: payload.verificationId,
    });
  });
  const records = new SessionRecordRepository(
    options,
    store,
    telemetryOf(logger),
    new SubjectIndex(store, options.dataKeys, RECORD_RETENTION_MS),
  );
  const tracker = new VerificationTracker(
    options,
    store,
    records,
    telemetryOf(logger),
    new VerificationHandleCodec(options.handleKey),
    emitter,
  );
  return { tracker, records, emitted };
}

function pending(requestId: string, method: 'sms' | 'flash_call', journeyId?: string): SessionRecord {
  return {
    requestId,
    phoneNumber: '+79123456789',
    method,
    status: 'sent',
    awaitingCode: true,
    createdAt: NOW,
    expiresAt: NOW + 300_000,
    verifiedAt: null,
    owner: 'user-1',
    ...(journeyId === undefined ? {} : { journeyId }),
  };
}

function verified(record: SessionRecord): VerificationSession {
  return {
    requestId: record.requestId,
    phoneNumber: record.phoneNumber,
    method: record.method,
    status: 'verified',
    verifiedAt: new Date(NOW + 1000),
    expiresAt: new Date(record.expiresAt),
    awaitingCode: false,
  };
}

describe.each(['two instances on Redis', 'one instance on a MemoryStore'] as const)(
  'event claims under concurrent observers (%s)',
  (kind) => {
    const stores: VerificationStore[] = [];
    afterEach(async () => {
      for (const store of stores.splice(0)) await store.close();
    });

    /** Two observers' instances over one deployment's store. */
    async function deployment(): Promise<[Instance, Instance]> {
      if (kind === 'one instance on a MemoryStore') {
        const store = new MemoryStore({ clock: () => NOW });
        stores.push(store);
        return [instanceOn(store), instanceOn(store)];
      }
      const keyPrefix = uniqueKeyPrefix('event-claim-race');
      const pair = [0, 1].map(() => new RedisStore({ url: sharedRedisUrl(), keyPrefix, clock: () => NOW }));
      for (const store of pair) await untilAnswering(store);
      stores.push(...pair);
      return [instanceOn(pair[0]!), instanceOn(pair[1]!)];
    }

    it(`one outcome observed ${OBSERVERS} times at once on each side is emitted once`, async () => {
      const [a, b] = await deployment();
      const record = pending(`req-${kind.length}-single`, 'sms');
      await a.records.save(record);
      await Promise.all(
        [a, b].flatMap((instance) =>
          Array.from({ length: OBSERVERS }, () =>
            instance.tracker.observeQuietly(verified(record), 'poll', record),
          ),
        ),
      );
      const all = [...a.emitted, ...b.emitted];
      expect(all.map((e) => e.event)).toEqual(['verification.verified']);
    });

    it('two steps of a journey verified at once: one verified, one verified_again, both named by the journey', async () => {
      const [a, b] = await deployment();
      // Many journeys at once, so that the two steps' claims of some journey meet.
      const journeys = Array.from({ length: 20 }, (_, n) => {
        const first = pending(`req-${kind.length}-${n}-first`, 'sms');
        const second = pending(`req-${kind.length}-${n}-second`, 'flash_call', first.requestId);
        const journey: JourneyRecord = {
          journeyId: first.requestId,
          phoneNumber: first.phoneNumber,
          steps: [
            { requestId: first.requestId, method: 'sms', startedAt: NOW },
            { requestId: second.requestId, method: 'flash_call', startedAt: NOW + 1 },
          ],
          createdAt: NOW,
        };
        return { first, second, journey };
      });
      for (const { first, second, journey } of journeys) {
        await a.records.save(first);
        await a.records.save(second);
        await a.records.saveJourney(journey, second.expiresAt);
      }
      await Promise.all(
        journeys.flatMap(({ first, second }) =>
          [a, b].flatMap((instance) =>
            [first, second, second, first].map((record) =>
              instance.tracker.observeQuietly(verified(record), 'poll', record),
            ),
          ),
        ),
      );
      const all = [...a.emitted, ...b.emitted];
      for (const { first, second } of journeys) {
        const mine = all.filter((e) => e.requestId === first.requestId || e.requestId === second.requestId);
        expect(mine.map((e) => e.event).sort()).toEqual([
          'verification.verified',
          'verification.verified_again',
        ]);
        expect(new Set(mine.map((e) => e.requestId)).size).toBe(2);
        expect(new Set(mine.map((e) => e.verificationId)).size).toBe(1);
      }
    });
  },
);
