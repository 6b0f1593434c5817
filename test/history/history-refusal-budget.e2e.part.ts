/**
 * History's budget of refusal entries per caller: a caller's address, its network (an IPv4 /24,
 * an IPv6 /48) and its owner may each write REFUSAL_ENTRIES_PER_CALLER_HOUR (30) refusal entries an hour; past it,
 * their refusals are answered as before but not written (what a free request keeps is bounded).
 */
import { describe, expect, it } from '@jest/globals';
import { VerificationHistory } from '../../src/history/verification-history.service.js';
import { VerificationService } from '../../src/verification/verification.service.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { call, PLATFORMS, type Platform } from '../support/verification-app.js';
import { startAccountHost } from '../webhooks/harness.js';

const HOUR = 3_600_000;

describe.each(PLATFORMS)('history: refusal entries per caller and hour (%s)', (platform: Platform) => {
  const suite = sandboxSuite();
  const prefix = platform === 'express' ? '+7916555' : '+7916556';
  let serial = 0;
  const nextNumber = () => `${prefix}${String(++serial).padStart(4, '0')}`;

  async function boot(): Promise<VerificationHistory> {
    suite.host = await startAccountHost(platform, suite.sb, {
      balance: 1_000,
      trustProxy: true,
      module: { limits: {}, owner: undefined, history: {} },
    });
    return suite.host.app.get(VerificationHistory);
  }
  const start = (phone: string, ip: string, method = 'sms') =>
    call(
      suite.host!.url,
      'POST',
      '/verification/start',
      { phone_number: phone, method },
      { 'x-forwarded-for': ip },
    );
  /** Starts ever new numbers from `ip` until `n` were refused; answers the refused numbers. */
  async function refusedStarts(ip: string, n: number): Promise<string[]> {
    const refused: string[] = [];
    for (let i = 0; refused.length < n && i < n + 40; i++) {
      const phone = nextNumber();
      if ((await start(phone, ip)).status >= 400) refused.push(phone);
    }
    expect(refused).toHaveLength(n);
    return refused;
  }
  async function written(history: VerificationHistory, numbers: string[]): Promise<boolean[]> {
    return Promise.all(
      numbers.map(async (phoneNumber) =>
        (await history.list({ phoneNumber })).some((e) => e.kind === 'refusal'),
      ),
    );
  }

  it('one address: its 29th and 30th refusals of the hour are written, the 31st is not (nor one tick before the hour ends); the next hour, written again', async () => {
    const history = await boot();
    const refused = await refusedStarts('203.0.113.66', 31);
    expect(await written(history, refused)).toEqual([...Array(30).fill(true), false]);

    // The window is the hour from the caller's first refusal: one tick before its end, still spent.
    await suite.sb.advance(HOUR - 1);
    expect(await written(history, await refusedStarts('203.0.113.66', 1))).toEqual([false]);
    await suite.sb.advance(1);
    const later = await refusedStarts('203.0.113.66', 1);
    expect(await written(history, later)).toEqual([true]);
  }, 120_000);

  it("an address that is not an IP (a proxy's `unknown`) has no network: its own budget still stops it at 30", async () => {
    const history = await boot();
    const refused = await refusedStarts('unknown', 31);
    expect(await written(history, refused)).toEqual([...Array(30).fill(true), false]);
  }, 120_000);

  it('one network: refusals from 31 addresses of one IPv6 /48 write 30 entries, then none', async () => {
    const history = await boot();
    const refused: string[] = [];
    for (let i = 0; refused.length < 31 && i < 40; i++) {
      // Each /64 of the /48 is its own address: its own 10 paid starts, then refusals.
      refused.push(...(await refusedStarts(`2001:db8:77:${i.toString(16)}::1`, 1)));
    }
    expect(await written(history, refused)).toEqual([...Array(30).fill(true), false]);
  }, 180_000);

  it('one owner: its refusals from 31 networks write 30 entries, then none; another owner is written; refusals without an owner share no budget', async () => {
    // Every start refused by the host's own rule: a signed-in owner's refusals, each from a new /24.
    suite.host = await startAccountHost(platform, suite.sb, {
      trustProxy: true,
      module: { limits: { beforeStart: () => false }, history: {} },
    });
    const history = suite.host.app.get(VerificationHistory);
    const refusedBy = async (owner: string | undefined, ip: string): Promise<string> => {
      const phone = nextNumber();
      const res = await call(
        suite.host!.url,
        'POST',
        '/verification/start',
        { phone_number: phone, method: 'sms' },
        { 'x-forwarded-for': ip, ...(owner === undefined ? {} : { 'x-user': owner }) },
      );
      expect(res.body).toMatchObject({ status: 403, reason: 'refused' });
      return phone;
    };
    const refused: string[] = [];
    for (let i = 0; i < 31; i++) refused.push(await refusedBy('owner-many-networks', `198.51.${i}.7`));
    expect(await written(history, refused)).toEqual([...Array(30).fill(true), false]);
    expect(await written(history, [await refusedBy('owner-other', '198.51.100.7')])).toEqual([true]);
    const ownerless: string[] = [];
    for (let i = 0; i < 31; i++) ownerless.push(await refusedBy(undefined, `192.0.${i}.9`));
    expect(await written(history, ownerless)).toEqual(Array(31).fill(true));
  });

  it("one owner's refusals of the host's own starts (no address): 30 written, then none", async () => {
    suite.host = await startAccountHost(platform, suite.sb, {
      module: { limits: { beforeStart: () => false }, history: {} },
    });
    const history = suite.host.app.get(VerificationHistory);
    const service = suite.host.app.get(VerificationService);
    const refused: string[] = [];
    for (let i = 0; i < 31; i++) {
      const phone = nextNumber();
      await expect(
        service.start({ phoneNumber: phone, method: 'sms', owner: 'owner-own-calls' }),
      ).rejects.toMatchObject({ errorCode: 'start_refused' });
      refused.push(phone);
    }
    expect(await written(history, refused)).toEqual([...Array(30).fill(true), false]);
  });

  // A free session (a method charged on proof) costs its starter nothing: a ring holding only such
  // sessions is not one a paid start made, and its refusals spend the callers' budget as a new ring's do.
  it("numbers each started free by someone else: one address's refusals of them write 30 entries, then none", async () => {
    suite.host = await startAccountHost(platform, suite.sb, {
      balance: 1_000,
      trustProxy: true,
      module: {
        limits: { beforeStart: ({ method }) => method !== 'sms' || { allow: false, reason: 'captcha' } },
        owner: undefined,
        history: {},
      },
    });
    const history = suite.host.app.get(VerificationHistory);
    const numbers: string[] = [];
    for (let i = 1; i <= 31; i++) {
      const phone = nextNumber();
      expect((await start(phone, `10.${i}.0.1`, 'reverse_flash_call')).status).toBe(201);
      expect((await start(phone, '198.51.100.7')).status).toBe(403);
      numbers.push(phone);
    }
    expect(await written(history, numbers)).toEqual([...Array(30).fill(true), false]);
  }, 120_000);
});
