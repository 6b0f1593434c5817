/**
 * What protection does with the tracker's events, registration by registration: a session's end settles
 * its spend reservation only in the registration it belongs to (two named registrations share one event
 * bus, and may share the cap's keys), as a verification is counted only by its own.
 */
import { describe, expect, it } from '@jest/globals';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { VerificationEventName, type VerificationEvent } from '../core/verification-events.js';
import { ProtectionEvents } from './protection-events.js';

type Ended = [string, { verified: boolean; delivered: boolean }];

async function ends(name: string | undefined, event: Partial<VerificationEvent>): Promise<Ended[]> {
  const emitter = new EventEmitter2();
  const ended: Ended[] = [];
  const listener = new ProtectionEvents(
    { name, limits: { enabled: false, freeStartPerCaller: false } } as never,
    { logger: { warn: () => undefined } } as never,
    { enabled: false } as never,
    {} as never,
    { ended: async (...args: Ended) => void ended.push(args) } as never,
    emitter,
    { get: async () => ({ delivered: false }) } as never,
  );
  listener.onModuleInit();
  await emitter.emitAsync(VerificationEventName.expired, { requestId: 'r-1', status: 'expired', ...event });
  listener.onModuleDestroy();
  return ended;
}

describe("protection settles a session's spend only in its own registration", () => {
  it('its own end is settled, with what its record says', async () => {
    await expect(ends(undefined, {})).resolves.toStrictEqual([
      ['r-1', { verified: false, delivered: false }],
    ]);
    await expect(ends('north', { registration: 'north' })).resolves.toStrictEqual([
      ['r-1', { verified: false, delivered: false }],
    ]);
  });

  it("another registration's end is not settled here", async () => {
    await expect(ends('north', { registration: 'south' })).resolves.toStrictEqual([]);
    await expect(ends('north', {})).resolves.toStrictEqual([]);
    await expect(ends(undefined, { registration: 'south' })).resolves.toStrictEqual([]);
  });
});

describe('protection counts a verification only in its own registration, as it settles an end', () => {
  async function counted(name: string | undefined, event: Partial<VerificationEvent>): Promise<string[]> {
    const emitter = new EventEmitter2();
    const seen: string[] = [];
    const listener = new ProtectionEvents(
      { name, limits: { enabled: true, freeStartPerCaller: { points: 1 } } } as never,
      { logger: { warn: () => undefined } } as never,
      {
        enabled: true,
        verified: async (e: VerificationEvent) => void seen.push(`pumping ${e.requestId}`),
      } as never,
      { freeStartProved: async (id: string) => void seen.push(`free ${id}`) } as never,
      undefined,
      emitter,
    );
    listener.onModuleInit();
    await emitter.emitAsync(VerificationEventName.verified, {
      requestId: 'r-2',
      status: 'verified',
      ...event,
    });
    listener.onModuleDestroy();
    return seen.sort();
  }

  it("its own, not a test number's, not another registration's", async () => {
    await expect(counted('north', { registration: 'north' })).resolves.toStrictEqual([
      'free r-2',
      'pumping r-2',
    ]);
    await expect(counted(undefined, {})).resolves.toStrictEqual(['free r-2', 'pumping r-2']);
    await expect(counted('north', { registration: 'south' })).resolves.toStrictEqual([]);
    await expect(counted('north', {})).resolves.toStrictEqual([]);
    await expect(counted(undefined, { test: true })).resolves.toStrictEqual([]);
  });
});
