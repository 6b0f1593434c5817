/**
 * Attack (helper-206, on 93f62d16: in-doubt starts remembered at their send). Two starts of one number in
 * doubt at once, sent less than `api.timeoutMs` apart (two callers: the resend cooldown is per caller).
 * `adopt` matched a session to the start whose wait's middle (`at + timeoutMs / 2`) was nearest its
 * creation, so a session created soon after its own send went to the start sent before it, whichever
 * webhook came first. With an erasure between the two sends, the later session took the earlier start's
 * entry (refused: erased since it), and the earlier session then took the later start's (adopted: the
 * erasure came before that send), keeping the erased subject's session. Without an erasure each session
 * was recorded under the other owner.
 *
 * Expected: each session answers the latest start sent by its creation. Low (needs two starts of one
 * number in doubt at once, the later session's webhook first).
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import type { VerificationSession } from '../../src/api/api.types.js';
import { resolveVerificationOptions } from '../../src/options/verification.options.js';
import type { SessionRecordRepository } from '../../src/sessions/session-record.repository.js';
import { MemoryStore } from '../../src/store/memory.store.js';
import { InDoubtStarts } from '../../src/verification/in-doubt-starts.js';
import { VerificationErasure } from '../../src/verification/verification-erasure.js';
import { inDoubtParts } from './in-doubt-parts.js';

const T0 = 1_700_000_000_000;
const NUMBER = '+79123456783';
let now = T0;
const OPTIONS = resolveVerificationOptions({
  api: { baseUrl: 'http://127.0.0.1:9', apiKey: 'key', apiSecret: 'secret-secret-secret', timeoutMs: 10_000 },
  webhooks: { secret: 'whsec_' + Buffer.from('0123456789abcdef0123456789abcdef').toString('base64') },
  clock: () => now,
});

describe('two starts of one number in doubt at once', () => {
  let store: MemoryStore;
  let records: SessionRecordRepository;
  let erasure: VerificationErasure;
  let inDoubt: InDoubtStarts;
  const sessions = new Map<string, VerificationSession>();
  /** The API's session `id`, created at `at` on its clock. */
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
  /** A start sent at `sentAt` whose wait for the API failed `timeoutMs` later. */
  const inDoubtSince = async (owner: string, sentAt: number) => {
    now = sentAt + OPTIONS.api.timeoutMs;
    await inDoubt.remember({ phoneNumber: NUMBER, method: 'sms', owner }, sentAt);
  };

  beforeEach(() => {
    now = T0;
    store = new MemoryStore({ clock: () => now });
    ({ records, erasure, inDoubt } = inDoubtParts(OPTIONS, store, (id) => sessions.get(id)));
  });
  afterEach(() => store.close());

  it('sent before and after an erasure: the later webhook first adopts its own session, the erased one is not kept', async () => {
    upstream('A', T0 + 100);
    upstream('B', T0 + 6_100);
    now = T0 + 5_000;
    await erasure.forget({ phoneNumber: NUMBER });
    await inDoubtSince('alice', T0);
    await inDoubtSince('bob', T0 + 6_000);
    now = T0 + 20_000;
    const b = await inDoubt.adopt('B');
    const a = await inDoubt.adopt('A');
    expect({
      adopted: [a !== null, b !== null],
      kept: [(await records.get('A')) !== null, (await records.get('B')) !== null],
      bOwner: b?.record.owner,
    }).toEqual({ adopted: [false, true], kept: [false, true], bOwner: 'bob' });
  });

  it('3 s apart, no erasure, the later webhook first: each session keeps its own owner', async () => {
    upstream('C', T0 + 100);
    upstream('D', T0 + 3_100);
    await inDoubtSince('alice', T0);
    await inDoubtSince('bob', T0 + 3_000);
    now = T0 + 20_000;
    const d = await inDoubt.adopt('D');
    const c = await inDoubt.adopt('C');
    expect({ C: c?.record.owner, D: d?.record.owner }).toEqual({ C: 'alice', D: 'bob' });
  });

  it("the API's clock 2 s behind, both sessions created before both sends, in order: each keeps its own owner", async () => {
    // No session was created after a send: the earliest start (the nearest wait) answers the first webhook.
    upstream('E', T0 - 1_900);
    upstream('F', T0 - 900);
    await inDoubtSince('alice', T0);
    await inDoubtSince('bob', T0 + 1_000);
    now = T0 + 20_000;
    const e = await inDoubt.adopt('E');
    const f = await inDoubt.adopt('F');
    expect({ E: e?.record.owner, F: f?.record.owner }).toEqual({ E: 'alice', F: 'bob' });
  });

  it('remembered out of send order (two instances whose waits failed apart): each session still keeps its own owner', async () => {
    // Bob's instance remembers its start first; the sessions: one after each send, then two before both.
    upstream('G', T0 + 100);
    upstream('H', T0 + 3_100);
    upstream('I', T0 - 1_900);
    upstream('J', T0 - 900);
    await inDoubtSince('bob', T0 + 3_000);
    await inDoubtSince('alice', T0);
    now = T0 + 20_000;
    const h = await inDoubt.adopt('H');
    const g = await inDoubt.adopt('G');
    await inDoubtSince('bob', T0 + 1_000);
    await inDoubtSince('alice', T0);
    now = T0 + 20_000;
    const i = await inDoubt.adopt('I');
    const j = await inDoubt.adopt('J');
    expect([g, h, i, j].map((a) => a?.record.owner)).toEqual(['alice', 'bob', 'alice', 'bob']);
  });

  it('two callers whose starts were sent 999 ms apart: neither session is adopted; 1000 ms apart, each its own', async () => {
    upstream('K', T0 + 1_100);
    upstream('L', T0 + 1_200);
    await inDoubtSince('alice', T0);
    await inDoubtSince('bob', T0 + 999);
    now = T0 + 20_000;
    expect([await inDoubt.adopt('K'), await inDoubt.adopt('L')]).toEqual([null, null]);
    expect([await records.get('K'), await records.get('L')]).toEqual([null, null]);
    await store.delete(InDoubtStarts.inDoubtKey(OPTIONS.dataKeys, NUMBER));
    upstream('M', T0 + 100);
    upstream('N', T0 + 1_100);
    await inDoubtSince('alice', T0);
    await inDoubtSince('bob', T0 + 1_000);
    now = T0 + 20_000;
    const n = await inDoubt.adopt('N');
    const m = await inDoubt.adopt('M');
    expect({ M: m?.record.owner, N: n?.record.owner }).toEqual({ M: 'alice', N: 'bob' });
  });

  it("one caller's two starts sent 10 ms apart, or another purpose's: the same caller's are adopted, another purpose's are not", async () => {
    upstream('P', T0 + 20);
    upstream('Q', T0 + 30);
    await inDoubtSince('alice', T0);
    await inDoubtSince('alice', T0 + 10);
    now = T0 + 20_000;
    const p = await inDoubt.adopt('P');
    const q = await inDoubt.adopt('Q');
    expect({ P: p?.record.owner, Q: q?.record.owner }).toEqual({ P: 'alice', Q: 'alice' });
    upstream('R', T0 + 20);
    now = T0 + OPTIONS.api.timeoutMs;
    await inDoubt.remember({ phoneNumber: NUMBER, method: 'sms', owner: 'alice', purpose: 'login' }, T0);
    await inDoubt.remember(
      { phoneNumber: NUMBER, method: 'sms', owner: 'alice', purpose: 'payout' },
      T0 + 10,
    );
    now = T0 + 20_000;
    expect(await inDoubt.adopt('R')).toBeNull();
  });
});
