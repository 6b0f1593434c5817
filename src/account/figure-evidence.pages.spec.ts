import { describe, expect, it } from '@jest/globals';
import type { SessionRecord } from '../core/session-record.js';
import type { VerificationStore } from '../store/verification-store.interface.js';
import { methodStatsSuite, rub } from '../../test/support/method-stats.fixture.js';
import { FOLLOWED_AFTER_MS, FOLLOWED_REMEMBERED } from './figure-evidence.js';

/*
 * A page following a session's status (FigureEvidence.followed) as evidence of a real user, for the
 * methods charged whatever happens (an SMS): which reads count, and whose end each one proves.
 */

const fx = methodStatsSuite();
const { session } = fx;
const rfc = { method: 'reverse_flash_call', cost: rub(0.25), awaitingCode: false } as const;

describe('MethodStats: a page that followed a session proves that session, or its journey, only', () => {
  /** A page read the record's status `afterMs` after its start. */
  const readAfter = (record: SessionRecord, afterMs = FOLLOWED_AFTER_MS) =>
    fx.stats.followed({ ...record, createdAt: fx.now - afterMs });

  /** Starts an SMS from its own caller; `read` may follow it; then it expires. */
  async function abandonedSms(caller: string, read?: (record: SessionRecord) => Promise<void>) {
    const record = session();
    await fx.stats.tally(record, caller, 'mobile');
    if (read) await read(record);
    await fx.stats.tally({ ...record, status: 'expired' });
  }

  it('an SMS ends as evidence when a page read its pending status from FOLLOWED_AFTER_MS on; other reads prove nothing', async () => {
    await abandonedSms('client:followed', (record) => readAfter(record));
    await abandonedSms('client:unread');
    await abandonedSms('client:early', (record) => readAfter(record, FOLLOWED_AFTER_MS - 1));
    // A read of a session that had ended already: no page waiting for it.
    await abandonedSms('client:ended', (record) => readAfter({ ...record, status: 'expired' }));
    expect((await fx.stats.learningSamples()).sms).toStrictEqual({ started: 1, verified: 0, callers: 4 });
    // The operator's report shows every expiry.
    expect((await fx.stats.figures()).sms).toMatchObject({ started: 4, expired: 4 });
  });

  it('a page following a later paid step proves the earlier steps of its own journey, not any other session', async () => {
    // Switched from a reverse call to an SMS a page followed: the user left after paying for the switch.
    const first = session(rfc);
    await fx.stats.tally(first, 'client:a', 'mobile');
    const paid = session({ phoneNumber: first.phoneNumber, journeyId: first.requestId });
    await fx.stats.tally(paid, 'client:a', 'mobile');
    await readAfter(paid);
    // An SMS first, a page following it, then a reverse call nobody followed.
    const sms = session();
    await fx.stats.tally(sms, 'client:b', 'mobile');
    await readAfter(sms);
    const then = session({ ...rfc, phoneNumber: sms.phoneNumber, journeyId: sms.requestId });
    await fx.stats.tally(then, 'client:b', 'mobile');
    // A reverse call of its own, nobody followed.
    const alone = session(rfc);
    await fx.stats.tally(alone, 'client:c', 'mobile');
    fx.now += 600_000;
    for (const record of [first, then, alone]) await fx.stats.tally({ ...record, status: 'expired' });
    expect((await fx.stats.learningSamples()).reverse_flash_call).toStrictEqual({
      started: 1,
      verified: 0,
      callers: 3,
    });
  });

  it('pages polling pending sessions cost the store one write each, however their reads interleave; past FOLLOWED_REMEMBERED sessions it forgets them and writes again', async () => {
    const marks: string[] = [];
    const counting: VerificationStore = Object.create(fx.store) as VerificationStore;
    counting.set = (key, ...rest) => {
      marks.push(key);
      return fx.store.set(key, ...rest);
    };
    const stats = fx.statsOn(counting);
    const poll = (record: SessionRecord) =>
      stats.followed({ ...record, createdAt: fx.now - FOLLOWED_AFTER_MS });
    const [a, b] = [session(), session()];
    for (let i = 0; i < 3; i++) for (const record of [a, b]) await poll(record);
    expect(marks).toStrictEqual([a, b].map((record) => `stats-followed:{${record.requestId}}`));
    // The instance's memory of them is bounded: full, it still knows them; one session more, it starts afresh.
    for (let i = 2; i < FOLLOWED_REMEMBERED; i++) await poll(session());
    await poll(a);
    expect(marks).toHaveLength(FOLLOWED_REMEMBERED);
    await poll(session());
    await poll(a);
    expect(marks).toHaveLength(FOLLOWED_REMEMBERED + 2);
  });

  it('a status read the store fails on is logged with the session, never thrown', async () => {
    const lines: { message: string; fields: unknown }[] = [];
    const log = fx.logger();
    log.warn = (message, fields) => void lines.push({ message, fields });
    const broken: VerificationStore = Object.create(fx.store) as VerificationStore;
    broken.set = () => Promise.reject(new Error('store down'));
    const failing = fx.statsOn(broken, { logger: log });
    const record = session();
    await expect(
      failing.followed({ ...record, createdAt: fx.now - FOLLOWED_AFTER_MS }),
    ).resolves.toBeUndefined();
    expect(lines).toStrictEqual([
      {
        message: 'method figures: a session transition could not be counted',
        fields: { method: 'sms', request_id: record.requestId, error: expect.stringContaining('store down') },
      },
    ]);
  });
});
