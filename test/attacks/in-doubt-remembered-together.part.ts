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
    ({ inDoubt } = inDoubtParts(OPTIONS, store, (id) => sessions.get(id)));
  });
  afterEach(() => store.close());

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
