/**
 * Attack (two deliveries of one in-doubt session at once: its `code_required` and `verified` webhooks, or a
 * delivery and its retry, on two instances): each finds no record and adopts. The first matches Alice's start
 * and takes it off the list; the second, reading the list after that and before the first has written the
 * record, matches the session against what is left: Bob's start, sent 3 s after the session was created
 * (within the clock-skew allowance). Alice's session is adopted twice (for Bob, then for Alice: whichever
 * record lands last), and Bob's own session, its start taken, is never adopted.
 *
 * Expected: a session is adopted once, for its own start; Bob's session is still adopted for Bob.
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { longestCallMs } from '../../src/api/api-client.options.js';
import type { VerificationSession } from '../../src/api/api.types.js';
import { resolveVerificationOptions } from '../../src/options/verification.options.js';
import type { SessionRecordRepository } from '../../src/sessions/session-record.repository.js';
import { MemoryStore } from '../../src/store/memory.store.js';
import type { InDoubtStarts } from '../../src/verification/in-doubt-starts.js';
import { inDoubtParts } from './in-doubt-parts.js';

const T0 = 1_700_000_000_000;
const NUMBER = '+79123456785';
let now = T0;
const OPTIONS = resolveVerificationOptions({
  api: { baseUrl: 'http://127.0.0.1:9', apiKey: 'key', apiSecret: 'secret-secret-secret', timeoutMs: 10_000 },
  webhooks: { secret: 'whsec_' + Buffer.from('0123456789abcdef0123456789abcdef').toString('base64') },
  clock: () => now,
});

describe('one in-doubt session, two deliveries at once', () => {
  let store: MemoryStore;
  let records: SessionRecordRepository;
  let inDoubt: InDoubtStarts;
  /** The next API read of a session answers once this settles (a slow read). */
  let slowRead: Promise<void> | undefined;
  const sessions = new Map<string, VerificationSession>();
  const upstream = (id: string, at: number) =>
    sessions.set(id, {
      requestId: id,
      phoneNumber: NUMBER,
      method: 'sms',
      status: 'sent',
      createdAt: new Date(at),
      verifiedAt: null,
      awaitingCode: true,
    });

  beforeEach(() => {
    now = T0;
    store = new MemoryStore({ clock: () => now });
    slowRead = undefined;
    ({ records, inDoubt } = inDoubtParts(OPTIONS, store, (id) => {
      const read = slowRead;
      slowRead = undefined;
      return read === undefined ? sessions.get(id) : read.then(() => sessions.get(id));
    }));
  });
  afterEach(() => store.close());

  it("is adopted once, for Alice; Bob's session is still Bob's", async () => {
    upstream('A', T0 + 100);
    upstream('B', T0 + 3_100);
    now = T0 + 10_000;
    await inDoubt.remember({ phoneNumber: NUMBER, method: 'sms', owner: 'alice' }, T0);
    now = T0 + 13_000;
    await inDoubt.remember({ phoneNumber: NUMBER, method: 'sms', owner: 'bob' }, T0 + 3_000);
    now = T0 + 20_000;
    // The first delivery's adoption is held once it has taken its start off the list (its index slots
    // being reserved, a store round trip); the second delivery comes then.
    const reserve = records.reserveIndex.bind(records);
    let release = (): void => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    let calls = 0;
    records.reserveIndex = async (subject) => {
      if (++calls === 1) await held;
      return reserve(subject);
    };
    const first = inDoubt.adopt('A');
    await new Promise((resolve) => setTimeout(resolve, 20));
    const second = await inDoubt.adopt('A').catch(() => null);
    release();
    await first;
    const b = await inDoubt.adopt('B').catch(() => null);
    expect({
      second: second?.record.owner ?? null,
      A: (await records.get('A'))?.owner,
      B: b?.record.owner ?? null,
    }).toEqual({ second: null, A: 'alice', B: 'bob' });
  });

  /** Alice's and Bob's starts of the number, 3 s apart (no twins); their sessions created 100 ms after each. */
  async function twoStarts(): Promise<void> {
    upstream('A', T0 + 100);
    upstream('B', T0 + 3_100);
    now = T0 + 10_000;
    await inDoubt.remember({ phoneNumber: NUMBER, method: 'sms', owner: 'alice' }, T0);
    now = T0 + 13_000;
    await inDoubt.remember({ phoneNumber: NUMBER, method: 'sms', owner: 'bob' }, T0 + 3_000);
    now = T0 + 20_000;
  }

  it("two sessions' deliveries at once: each is adopted, for its own owner", async () => {
    await twoStarts();
    // Alice's adoption is held once it has taken her start off the list; Bob's session's webhook comes then.
    const reserve = records.reserveIndex.bind(records);
    let release = (): void => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    let calls = 0;
    records.reserveIndex = async (subject) => {
      if (++calls === 1) await held;
      return reserve(subject);
    };
    const a = inDoubt.adopt('A');
    await new Promise((resolve) => setTimeout(resolve, 20));
    const b = await inDoubt.adopt('B').catch(() => null);
    release();
    expect({ A: (await a)?.record.owner ?? null, B: b?.record.owner ?? null }).toEqual({
      A: 'alice',
      B: 'bob',
    });
  });

  it("a delivery a tick before the claim's end (an API read at its longest, the GET's retry deadline, and 5 s) adopts nothing; the first is Alice's", async () => {
    await twoStarts();
    let answer = (): void => undefined;
    slowRead = new Promise<void>((resolve) => (answer = resolve));
    const first = inDoubt.adopt('A');
    await new Promise((resolve) => setTimeout(resolve, 20));
    now += longestCallMs(OPTIONS.api, 'GET') + 5_000 - 1;
    const second = await inDoubt.adopt('A').catch(() => null);
    answer();
    await first;
    const b = await inDoubt.adopt('B').catch(() => null);
    expect({
      second: second?.record.owner ?? null,
      A: (await records.get('A'))?.owner,
      B: b?.record.owner ?? null,
    }).toEqual({ second: null, A: 'alice', B: 'bob' });
  });

  it("a delivery that comes once the session's record landed (it found none before) adopts nothing: Bob's start stays his", async () => {
    await twoStarts();
    expect((await inDoubt.adopt('A'))?.record.owner).toBe('alice');
    const again = await inDoubt.adopt('A').catch(() => null);
    const b = await inDoubt.adopt('B').catch(() => null);
    expect({
      again: again?.record.owner ?? null,
      A: (await records.get('A'))?.owner,
      B: b?.record.owner ?? null,
    }).toEqual({ again: null, A: 'alice', B: 'bob' });
  });

  it("a start another session's adoption takes between this adoption's read and its write: the others' starts stay on the list", async () => {
    await twoStarts();
    // A second session of Alice's start (the API's own double): its delivery is adopted while A's looks.
    upstream('A2', T0 + 200);
    const read = store.get.bind(store);
    let during: (() => Promise<unknown>) | undefined = () => inDoubt.adopt('A2');
    store.get = async (key: string) => {
      const value = await read(key);
      const run = key.startsWith('indoubt:') && key !== 'indoubt:any' ? during : undefined;
      if (run !== undefined) during = undefined;
      await run?.();
      return value;
    };
    await inDoubt.adopt('A');
    expect(during).toBeUndefined();
    const b = await inDoubt.adopt('B').catch(() => null);
    expect(b?.record.owner ?? null).toBe('bob');
  });
});
