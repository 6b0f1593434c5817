/**
 * What protection does with the tracker's events, registration by registration: a session's end settles
 * its spend reservation only in the registration it belongs to (two named registrations share one event
 * bus, and may share the cap's keys), as a verification is counted only by its own. How an end is settled
 * (verified, delivered by its record), and the line the host's log gets when a settlement or a count fails.
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

  it("its own, not a test number's, not another registration's (the unnamed one's included)", async () => {
    await expect(counted('north', { registration: 'north' })).resolves.toStrictEqual([
      'free r-2',
      'pumping r-2',
    ]);
    await expect(counted(undefined, {})).resolves.toStrictEqual(['free r-2', 'pumping r-2']);
    await expect(counted('north', { registration: 'south' })).resolves.toStrictEqual([]);
    await expect(counted('north', {})).resolves.toStrictEqual([]);
    // The unnamed registration hears the named ones' events too (one event bus): not its own either.
    await expect(counted(undefined, { registration: 'south' })).resolves.toStrictEqual([]);
    await expect(counted(undefined, { test: true })).resolves.toStrictEqual([]);
  });
});

describe("how a session's end is settled, and what the host's log is told when it is not", () => {
  type Warned = [string, Record<string, unknown>];

  async function settles(
    status: VerificationEvent['status'],
    record: { delivered?: boolean } | null,
    ended: (...args: Ended) => Promise<void> = async () => undefined,
  ): Promise<{ ended: Ended[]; warned: Warned[] }> {
    const emitter = new EventEmitter2();
    const seen: Ended[] = [];
    const warned: Warned[] = [];
    const listener = new ProtectionEvents(
      { limits: { enabled: false, freeStartPerCaller: false } } as never,
      { logger: { warn: (...line: Warned) => void warned.push(line) } } as never,
      // Off, as the module's: the defence and the free starts count nothing.
      { enabled: false, verified: async () => undefined } as never,
      { freeStartProved: async () => undefined } as never,
      { ended: async (...args: Ended) => (seen.push(args), ended(...args)) } as never,
      emitter,
      { get: async () => record } as never,
    );
    listener.onModuleInit();
    const name = status === 'verified' ? VerificationEventName.verified : VerificationEventName.expired;
    await emitter.emitAsync(name, { requestId: 'r-3', status });
    listener.onModuleDestroy();
    return { ended: seen, warned };
  }

  it('a verified session is settled as verified and delivered, whatever its record says (a reverse call is never delivered)', async () => {
    await expect(settles('verified', { delivered: false })).resolves.toStrictEqual({
      ended: [['r-3', { verified: true, delivered: true }]],
      warned: [],
    });
  });

  it('an expired session is settled by its record: delivered when it says so, and when it is lost', async () => {
    await expect(settles('expired', { delivered: true })).resolves.toMatchObject({
      ended: [['r-3', { verified: false, delivered: true }]],
    });
    await expect(settles('expired', {})).resolves.toMatchObject({
      ended: [['r-3', { verified: false, delivered: false }]],
    });
    await expect(settles('expired', null)).resolves.toMatchObject({
      ended: [['r-3', { verified: false, delivered: true }]],
    });
  });

  it('a settlement the store fails is logged with its error, and nothing is thrown', async () => {
    const failing = async (): Promise<void> => {
      throw new Error('connection lost');
    };
    await expect(settles('expired', { delivered: true }, failing)).resolves.toMatchObject({
      warned: [['spend cap: an ended session could not be settled', { error: 'Error: connection lost' }]],
    });
  });
});

describe("what the host's log is told of a verification the defence or the free starts could not count", () => {
  type Warned = [string, Record<string, unknown>];

  async function warnings(failing: { pumping?: Error; free?: Error }): Promise<Warned[]> {
    const emitter = new EventEmitter2();
    const warned: Warned[] = [];
    const listener = new ProtectionEvents(
      { limits: { enabled: true, freeStartPerCaller: { points: 1 } } } as never,
      { logger: { warn: (...line: Warned) => void warned.push(line) } } as never,
      {
        enabled: true,
        verified: async () => {
          if (failing.pumping) throw failing.pumping;
        },
      } as never,
      {
        freeStartProved: async () => {
          if (failing.free) throw failing.free;
        },
      } as never,
      undefined,
      emitter,
    );
    listener.onModuleInit();
    await emitter.emitAsync(VerificationEventName.verified, { requestId: 'r-4', status: 'verified' });
    listener.onModuleDestroy();
    return warned;
  }

  it('each failure is its own line, naming its error, and nothing is thrown', async () => {
    await expect(warnings({})).resolves.toStrictEqual([]);
    await expect(warnings({ pumping: new TypeError('store down') })).resolves.toStrictEqual([
      ['pumping defence: a verification could not be counted', { error: 'TypeError: store down' }],
    ]);
    await expect(warnings({ free: new RangeError('timed out') })).resolves.toStrictEqual([
      ['free starts: a proved start could not give its points back', { error: 'RangeError: timed out' }],
    ]);
  });
});
