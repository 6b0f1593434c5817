/**
 * Attack (lane attack-44c): the guard's upstream reads are metered per owner (GUARD_READS_PER_OWNER,
 * 30 a minute), so "one user presenting many pending verifications cannot spend the account's API rate
 * limit on other users' starts". The meter is asked only for a refresh of a record the store holds. A
 * handle whose record the store no longer has (a restart on MemoryStore, as after every deploy; on any
 * store, a handle kept past its record's retention) is rebuilt from the API (`SessionRefresher.recover`)
 * with no meter at all: one upstream GET per handle presented, as fast as the caller sends them.
 * A caller who collected handles of free starts (reverse flash calls, charged only on proof, over a day
 * from its addresses) presents them all to a guarded route at once after a deploy: 60 handles, one
 * owner, one second, 60 GETs, twice the owner's meter; with a few thousand handles the account's API
 * rate is gone and real users' starts meet the API's 429, the harm issue 44 closed for stored records.
 * The status route's rebuild is unmetered the same way (its meter, 6 reads per 3 s per caller, is
 * asked only to refresh a stored record): 60 status reads, 60 GETs.
 *
 * Expected: a rebuild read takes the caller's meter as a refresh does, on the guard and on the status
 * route (past it: `reason: "unknown"`, a 404 or a 503, without an upstream read). Medium (the host's API rate limit spent by one caller, real users
 * denied). Failed on the code it was written against; passes since its fix.
 */
import { describe, expect, it } from '@jest/globals';
import { GUARD_READS_PER_OWNER } from '../../src/guard/guard-read-meter.js';
import { STATUS_READS_PER_CALLER } from '../../src/protection/status-read-meter.js';
import { call, PLATFORMS, type Platform } from '../support/verification-app.js';
import { as, lostRecordsSuite, numbersFrom, type Account } from '../verified-phone/guard-host.js';

const GETS = 'GET /v1/verify/:id';

const phoneNumber = numbersFrom('+7916447');

describe.each(PLATFORMS)('the guard and handles whose records are gone (%s)', (platform: Platform) => {
  const lost = lostRecordsSuite(platform);
  const { suite } = lost;

  /** `count` handles of free starts (reverse flash calls) of `user`, then a restart (a deploy) on a new MemoryStore. */
  async function handlesThenRestart(account: Account, count: number, user: string, limits?: object) {
    await lost.boot(account);
    const ids: string[] = [];
    for (let i = 0; i < count; i++) ids.push(await lost.start(phoneNumber(), as(user)));
    await lost.boot(account, limits);
    return ids;
  }

  it("one owner's handles rebuilt after a restart cost the API no more than the status route's meter", async () => {
    const account = await suite.sb.createAccount({ balance: 100 });
    // The restarted app has the default limits: the status route's meter (6 reads per 3 s per caller) is on.
    const ids = await handlesThenRestart(account, 60, 'mallory', {});
    const before = suite.sb.requestCount(GETS);
    const answers = await Promise.all(
      ids.map((id) => call(suite.host!.url, 'GET', `/verification/status/${id}`, undefined, as('mallory'))),
    );
    // Past the meter nothing can be said of a lost record without a read: 429 with Retry-After (the page
    // polls again), never a status the module does not know.
    for (const a of answers) {
      if (a.status === 200) continue;
      expect({ status: a.status, code: a.body.error_code }).toEqual({
        status: 429,
        code: 'rate_limit_exceeded',
      });
      expect(Number(a.headers.get('retry-after'))).toBeGreaterThan(0);
    }
    expect(answers.filter((a) => a.status === 200).length).toBeGreaterThan(0);
    expect(suite.sb.requestCount(GETS) - before).toBeLessThanOrEqual(STATUS_READS_PER_CALLER.points);
  });

  it("one owner's handles rebuilt after a restart cost the API no more than the owner's meter", async () => {
    const account = await suite.sb.createAccount({ balance: 100 });
    // A deploy: the app restarts on a new MemoryStore, on the same account and keys.
    const ids = await handlesThenRestart(account, 2 * GUARD_READS_PER_OWNER.points, 'mallory');
    const before = suite.sb.requestCount(GETS);
    const answers = await Promise.all(
      ids.map((id) =>
        call(suite.host!.url, 'POST', '/account/phone', {}, as('mallory', { 'x-verification-id': id })),
      ),
    );
    expect(answers.every((a) => a.status === 409 || a.status === 403)).toBe(true);
    expect(suite.sb.requestCount(GETS) - before).toBeLessThanOrEqual(GUARD_READS_PER_OWNER.points);
  });
});
