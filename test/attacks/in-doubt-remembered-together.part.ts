/**
 * Attack (two starts of one number in doubt at once, their waits failing together): `remember` reads the
 * number's in-doubt starts, adds its own and writes the list back. Two waits that fail in the same moment
 * (two callers' starts sent together, one instance or two on one store) both read the list before either
 * writes it: the list kept holds one start, the other is lost, and its session, paid for upstream, is never
 * adopted (no record, no event for its owner, never followed).
 *
 * Expected: both starts are remembered; each session is adopted for its own owner.
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import type { VerificationSession } from '../../src/api/api.types.js';
import { resolveVerificationOptions } from '../../src/options/verification.options.js';
import { MemoryStore } from '../../src/store/memory.store.js';
import type { InDoubtStarts } from '../../src/verification/in-doubt-starts.js';
import { CapturingLogger } from '../support/log-capture.js';
import { inDoubtParts } from './in-doubt-parts.js';

const T0 = 1_700_000_000_000;
const NUMBER = '+79123456784';
let now = T0;
const OPTIONS = resolveVerificationOptions({
  api: { baseUrl: 'http://127.0.0.1:9', apiKey: 'key', apiSecret: 'secret-secret-secret', timeoutMs: 10_000 },
  webhooks: { secret: 'whsec_' + Buffer.from('0123456789abcdef0123456789abcdef').toString('base64') },
  clock: () => now,
});

describe('two starts of one number whose waits fail together', () => {
  let store: MemoryStore;
  let inDoubt: InDoubtStarts;
  let logger: CapturingLogger;
  const sessions = new Map<string, VerificationSession>();
  const upstream = (id: string, method: 'sms' | 'flash_call', at: number) =>
    sessions.set(id, {
      requestId: id,
      phoneNumber: NUMBER,
      method,
      status: 'sent',
      createdAt: new Date(at),
      verifiedAt: null,
      awaitingCode: true,
    });

  beforeEach(() => {
    now = T0;
    store = new MemoryStore({ clock: () => now });
    logger = new CapturingLogger();
    ({ inDoubt } = inDoubtParts(OPTIONS, store, (id) => sessions.get(id), logger));
  });
  afterEach(() => store.close());

  /**
   * Another instance remembers a start of the number (a flash call of its own caller) after each of the
   * next `times` reads of the number's list, past the first `skip`: each write over the list as read fails.
   */
  const othersWriteAfterReads = (times: number, skip = 0) => {
    const read = store.get.bind(store);
    let seen = 0;
    store.get = async (key: string) => {
      const value = await read(key);
      if (key.startsWith('indoubt:') && key !== 'indoubt:any' && ++seen > skip && seen <= skip + times) {
        const list = value === null ? [] : (JSON.parse(OPTIONS.dataKeys.open(value)!) as unknown[]);
        const theirs = { method: 'flash_call', owner: `other-${seen}`, at: T0 - seen };
        await store.set(key, OPTIONS.dataKeys.seal(JSON.stringify([...list, theirs])), 3_600_000);
      }
      return value;
    };
  };
  const GAVE_UP = 'Verification store unavailable: remember failed (the in-doubt starts kept changing)';

  it.each([
    [7, 'alice'],
    [8, null],
  ])(
    'a list another instance writes after each of %i reads: remembered on the 8th try, else given up with a warning',
    async (times, owner) => {
      upstream('A', 'sms', T0 + 100);
      now = T0 + OPTIONS.api.timeoutMs;
      othersWriteAfterReads(times);
      await inDoubt.remember({ phoneNumber: NUMBER, method: 'sms', owner: 'alice' }, T0);
      const warned = logger.lines.filter((line) => line.includes('could not be remembered'));
      expect({ warned: warned.length, text: warned.every((line) => line.includes(GAVE_UP)) }).toEqual({
        warned: owner === null ? 1 : 0,
        text: true,
      });
      now = T0 + 20_000;
      expect((await inDoubt.adopt('A'))?.record.owner ?? null).toBe(owner);
    },
  );

  it.each([
    [7, 'alice'],
    [8, null],
  ])(
    'an adoption whose list another instance writes after each of %i reads: it takes its start off on the 8th try, else fails (the webhook comes again)',
    async (times, owner) => {
      upstream('A', 'sms', T0 + 100);
      now = T0 + OPTIONS.api.timeoutMs;
      await inDoubt.remember({ phoneNumber: NUMBER, method: 'sms', owner: 'alice' }, T0);
      now = T0 + 20_000;
      // The adoption's first read matches the session; the writes come after each read of its change.
      othersWriteAfterReads(times, 1);
      const adopted = inDoubt.adopt('A');
      if (owner === null)
        await expect(adopted).rejects.toThrow(
          'Verification store unavailable: adopt failed (the in-doubt starts kept changing)',
        );
      else expect((await adopted)?.record.owner).toBe(owner);
    },
  );

  it('both are remembered: each session is adopted for its own owner', async () => {
    // Alice's SMS and Bob's flash call, sent on the same millisecond, created 100 ms later.
    upstream('A', 'sms', T0 + 100);
    upstream('B', 'flash_call', T0 + 100);
    now = T0 + OPTIONS.api.timeoutMs;
    await Promise.all([
      inDoubt.remember({ phoneNumber: NUMBER, method: 'sms', owner: 'alice' }, T0),
      inDoubt.remember({ phoneNumber: NUMBER, method: 'flash_call', owner: 'bob' }, T0),
    ]);
    now = T0 + 20_000;
    const a = await inDoubt.adopt('A');
    const b = await inDoubt.adopt('B');
    expect({ A: a?.record.owner, B: b?.record.owner }).toEqual({ A: 'alice', B: 'bob' });
  });

  it('a start remembered while another start of the number is adopted stays remembered, and is adopted in turn', async () => {
    upstream('C', 'sms', T0 + 100);
    upstream('D', 'flash_call', T0 + 5_100);
    now = T0 + OPTIONS.api.timeoutMs;
    await inDoubt.remember({ phoneNumber: NUMBER, method: 'sms', owner: 'alice' }, T0);
    now = T0 + 20_000;
    // Bob's wait fails as Alice's session is adopted: after the adoption read the list, before it writes it.
    const read = store.get.bind(store);
    let during: (() => Promise<void>) | undefined = () =>
      inDoubt.remember({ phoneNumber: NUMBER, method: 'flash_call', owner: 'bob' }, T0 + 5_000);
    store.get = async (key: string) => {
      const value = await read(key);
      const run = key.startsWith('indoubt:') && key !== 'indoubt:any' ? during : undefined;
      during = run === undefined ? during : undefined;
      await run?.();
      return value;
    };
    const c = await inDoubt.adopt('C');
    expect(during).toBeUndefined();
    const d = await inDoubt.adopt('D');
    expect({ C: c?.record.owner, D: d?.record.owner }).toEqual({ C: 'alice', D: 'bob' });
  });
});
