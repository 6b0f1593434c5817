import { describe, expect, it } from '@jest/globals';
import type { VerificationApiClient } from '../api/verification-api.client.js';
import { resolveVerificationOptions } from '../options/verification.options.js';
import type { SessionRecordRepository } from '../sessions/session-record.repository.js';
import { MemoryStore } from '../store/memory.store.js';
import { telemetryOf } from '../../test/support/telemetry.js';
import { InDoubtStarts } from './in-doubt-starts.js';

/*
 * One delivery adopts a session at a time: a second webhook of an unknown session, while the first one's API
 * read may still be retrying, is acknowledged without asking the API again (else it could match the session
 * to another start). The claim lasts the read's whole deadline (longestCallMs), on the store's clock.
 */

function rig(api: { timeoutMs?: number; retryDeadlineMs?: number }) {
  const r = { now: Date.UTC(2026, 11, 6, 12), reads: 0 };
  const store = new MemoryStore({ clock: () => r.now });
  const options = resolveVerificationOptions({
    api: { baseUrl: 'http://127.0.0.1:9', apiKey: 'key', apiSecret: 'secret-secret-secret', ...api },
    clock: () => r.now,
  });
  const ends: (() => void)[] = [];
  // The API's answer never comes until the test ends it: the first read is still retrying.
  const client = {
    getSession: () => {
      r.reads += 1;
      return new Promise((_, reject) => ends.push(() => reject(new Error('read ended'))));
    },
  } as unknown as VerificationApiClient;
  const records = {
    isErased: () => Promise.resolve(false),
    get: () => Promise.resolve(null),
  } as unknown as SessionRecordRepository;
  const starts = new InDoubtStarts(options, client, records, store, telemetryOf(options));
  return {
    r,
    /** A webhook naming `requestId`, while some start is in doubt. */
    async deliver(requestId = 'req-1'): Promise<{ adopted: Promise<unknown> }> {
      await store.set('indoubt:any', '1', 86_400_000);
      const adopted = starts.adopt(requestId).catch(() => 'failed');
      await new Promise((resolve) => setImmediate(resolve));
      return { adopted };
    },
    end: () => ends.forEach((end) => end()),
  };
}

describe('InDoubtStarts.adopt: one delivery at a time, for as long as its API read may take', () => {
  it.each([
    ['the defaults (a 5 s timeout, retried within 10 s): 15 s', {}, 15_000],
    ['a host’s retry deadline of 60 s: 65 s', { timeoutMs: 5_000, retryDeadlineMs: 60_000 }, 65_000],
    [
      'a 20 s timeout past a 10 s deadline: the GET is cut short at the deadline, 15 s',
      { timeoutMs: 20_000, retryDeadlineMs: 10_000 },
      15_000,
    ],
  ])('%s', async (_, api, leaseMs) => {
    const { r, deliver, end } = rig(api);
    const first = await deliver();
    expect(r.reads).toBe(1);
    r.now += leaseMs - 1;
    // Still the first delivery's: acknowledged, no second read.
    const second = await deliver();
    expect(r.reads).toBe(1);
    expect(await second.adopted).toBeNull();
    // Another session is another claim.
    const other = await deliver('req-2');
    expect(r.reads).toBe(2);
    r.now += 1;
    // The claim has ended with the read's deadline: the next delivery reads.
    const late = await deliver();
    expect(r.reads).toBe(3);
    end();
    expect(await Promise.all([first.adopted, other.adopted, late.adopted])).toStrictEqual([
      'failed',
      'failed',
      'failed',
    ]);
  });
});

describe('InDoubtStarts.adopt: the claim ends with its delivery (attack 225)', () => {
  function once(answer: () => Promise<unknown>) {
    const now = Date.UTC(2026, 11, 6, 12);
    const store = new MemoryStore({ clock: () => now });
    const options = resolveVerificationOptions({
      api: { baseUrl: 'http://127.0.0.1:9', apiKey: 'key', apiSecret: 'secret-secret-secret' },
      clock: () => now,
    });
    const r = { reads: 0 };
    const client = {
      getSession: () => {
        r.reads += 1;
        return answer();
      },
    } as unknown as VerificationApiClient;
    const records = {
      isErased: () => Promise.resolve(false),
      get: () => Promise.resolve(null),
    } as unknown as SessionRecordRepository;
    const starts = new InDoubtStarts(options, client, records, store, telemetryOf(options));
    return {
      r,
      async deliver(): Promise<unknown> {
        await store.set('indoubt:any', '1', 86_400_000);
        return starts.adopt('req-1').catch(() => 'failed');
      },
    };
  }

  it('an adoption the API fails (5xx) releases its claim: the webhook’s retry, at once, reads again', async () => {
    const { r, deliver } = once(() => Promise.reject(new Error('503 Service Unavailable')));
    expect(await deliver()).toBe('failed');
    expect(await deliver()).toBe('failed');
    expect(r.reads).toBe(2);
  });

  it('an adoption that ends (the session unknown to the API) releases its claim too', async () => {
    const notFound = Object.assign(
      Object.create((await import('../api/verification-api.error.js')).VerificationApiError.prototype),
      { status: 404 },
    );
    const { r, deliver } = once(() => Promise.reject(notFound));
    expect(await deliver()).toBeNull();
    expect(await deliver()).toBeNull();
    expect(r.reads).toBe(2);
  });
});
