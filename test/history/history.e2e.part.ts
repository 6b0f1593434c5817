/**
 * VerificationHistory: per-number and per-owner entries for support, written as the client routes
 * are used over real HTTP (starts, switches, checks right and wrong, refusals with their reason,
 * outcomes with their cost), kept for `retentionDays`, bounded per number, never holding a code.
 */
import { describe, expect, it } from '@jest/globals';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { VerificationHistory } from '../../src/history/verification-history.service.js';
import type { VerificationModuleOptions } from '../../src/options/verification.options.js';
import { startAccountHost } from '../webhooks/harness.js';
import { call, PLATFORMS, type Platform } from '../support/verification-app.js';
import { sharedRedisUrl } from '../support/redis-server.js';

describe.each(PLATFORMS)('verification history (%s)', (platform: Platform) => {
  const suite = sandboxSuite();
  let serial = 0;

  async function boot(overrides: Partial<VerificationModuleOptions> = {}): Promise<VerificationHistory> {
    suite.host = await startAccountHost(platform, suite.sb, { module: overrides });
    return suite.host.app.get(VerificationHistory);
  }
  const post = (path: string, body: unknown, user: string) =>
    call(suite.host!.url, 'POST', `/verification/${path}`, body, { 'x-user': user });
  const phoneNumber = () =>
    `+7916444${String(process.pid % 100).padStart(2, '0')}${String(++serial).padStart(2, '0')}`;

  it('one entry per start, check (right and wrong), switch, refusal and outcome, per number and per owner, never the code', async () => {
    const history = await boot({
      history: {},
      limits: {
        startPerPhoneAndCaller: { points: 3, windowMs: 3_600_000 },
        resendCooldownMs: false,
        spendCap: false,
        pumping: false,
      },
    });
    const phone = phoneNumber();
    const started = await post('start', { phone_number: phone, method: 'sms' }, 'alice');
    const id = started.body.verification_id;
    const [session] = suite.sb.sessionsFor(phone);
    await suite.sb.deliver(session!.request_id);
    const code = String(suite.sb.getSession(session!.request_id)!.code);
    const wrong = code === '0000' ? '1111' : '0000';
    expect((await post('check', { verification_id: id, code: wrong }, 'alice')).status).toBe(400);
    expect((await post('check', { verification_id: id, code }, 'alice')).body.verified).toBe(true);

    const second = await post('start', { phone_number: phone, method: 'flash_call' }, 'alice');
    const switched = await post(
      'switch',
      { verification_id: second.body.verification_id, method: 'sms' },
      'alice',
    );
    expect(switched.status).toBe(201);
    const refused = await post('start', { phone_number: phone, method: 'msgr1_otp' }, 'alice');
    expect(refused.status).toBe(429);

    const entries = await history.list({ phoneNumber: phone });
    expect(entries.map((e) => [e.kind, e.check ?? e.status ?? e.errorCode])).toEqual([
      ['start', 'sent'],
      ['check', 'wrong'],
      ['check', 'right'],
      ['outcome', 'verified'],
      ['start', 'sent'],
      ['switch', 'sent'],
      ['refusal', 'rate_limit_exceeded'],
    ]);
    expect(entries[0]).toMatchObject({
      phoneNumber: phone,
      owner: 'alice',
      method: 'sms',
      cost: { currency: 'RUB' },
    });
    expect(entries[0]!.at).toBeInstanceOf(Date);
    expect(entries[3]).toMatchObject({
      kind: 'outcome',
      cost: { amount: expect.any(Number), currency: 'RUB' },
    });
    expect(entries[6]).toMatchObject({
      kind: 'refusal',
      operation: 'start',
      reason: expect.any(String),
      method: 'msgr1_otp',
    });
    expect(JSON.stringify(entries)).not.toContain(`"${code}"`);
    expect(JSON.stringify(entries)).not.toContain(wrong);

    // The owner's history holds the same entries; another owner's and another number's are apart.
    expect((await history.list({ owner: 'alice' })).map((e) => e.kind)).toEqual(entries.map((e) => e.kind));
    expect(await history.list({ owner: 'bob' })).toEqual([]);
    expect(await history.list({ phoneNumber: phoneNumber() })).toEqual([]);
    // from/to bound the entries by time.
    await suite.sb.advance(60_000);
    await post('start', { phone_number: phoneNumber(), method: 'sms' }, 'alice');
    const later = await history.list({ owner: 'alice', from: new Date(suite.sb.now() - 1000) });
    expect(later.map((e) => e.kind)).toEqual(['start']);
    expect(await history.list({ owner: 'alice', to: new Date(suite.sb.now() - 30_000) })).toHaveLength(
      entries.length,
    );
    // Neither subject, or both: which field to give, as the routes' validation errors say it.
    for (const query of [undefined, {}, { phoneNumber: phone, owner: 'alice' }])
      await expect(history.list(query as never)).rejects.toMatchObject({
        errorCode: 'validation_error',
        message: 'Give either phoneNumber or owner',
        extra: { errors: [{ field: 'phoneNumber', message: 'give either phoneNumber (E.164) or owner' }] },
      });
  });

  it('a check refused for another reason than a wrong code is a refusal entry (operation check, its error_code), not a wrong code', async () => {
    const history = await boot({ history: {} });
    const phone = phoneNumber();
    const started = await post('start', { phone_number: phone, method: 'sms' }, 'ivan');
    const id = started.body.verification_id;
    const [session] = suite.sb.sessionsFor(phone);
    await suite.sb.deliver(session!.request_id);
    const code = String(suite.sb.getSession(session!.request_id)!.code);
    expect((await post('check', { verification_id: id, code }, 'ivan')).body.verified).toBe(true);
    const again = await post('check', { verification_id: id, code }, 'ivan');
    expect(again.status).toBeGreaterThanOrEqual(400);
    const entries = await history.list({ phoneNumber: phone });
    expect(entries.at(-1)).toMatchObject({
      kind: 'refusal',
      operation: 'check',
      errorCode: again.body.error_code,
    });
    expect(entries.filter((e) => e.kind === 'check').map((e) => e.check)).toEqual(['right']);
  });

  it("a reviewer number's entries are marked test; a real number's are not", async () => {
    const reviewer = platform === 'express' ? '+79990004651' : '+79990004652';
    const history = await boot({
      history: {},
      testNumbers: { numbers: [{ phoneNumber: reviewer, code: '4242' }] },
    });
    const started = await post('start', { phone_number: reviewer, method: 'sms' }, 'rita');
    expect(started.status).toBe(201);
    expect(
      (await post('check', { verification_id: started.body.verification_id, code: '4242' }, 'rita')).body
        .verified,
    ).toBe(true);
    const phone = phoneNumber();
    expect((await post('start', { phone_number: phone, method: 'sms' }, 'rita')).status).toBe(201);

    const entries = await history.list({ phoneNumber: reviewer });
    expect(entries.map((e) => [e.kind, e.test])).toEqual([
      ['start', true],
      ['check', true],
      ['outcome', true],
    ]);
    expect((await history.list({ phoneNumber: phone })).map((e) => [e.kind, e.test])).toEqual([
      ['start', undefined],
    ]);
  });

  it('bounded per number (the oldest give way) and kept for retentionDays', async () => {
    const history = await boot({ history: { maxEntries: 3, retentionDays: 1 } });
    const phone = phoneNumber();
    const methods = ['sms', 'flash_call', 'msgr1_otp', 'sms', 'flash_call'];
    for (const [i, method] of methods.entries()) {
      expect((await post('start', { phone_number: phone, method }, `carol-${i}`)).status).toBe(201);
      await suite.sb.advance(1000);
    }
    const listed = async () => (await history.list({ phoneNumber: phone })).map((e) => e.method);
    expect(await listed()).toEqual(methods.slice(2));
    // A start of a method charged on proof costs nothing: it has its own shelf and pushes no paid start out.
    expect((await post('start', { phone_number: phone, method: 'reverse_flash_call' }, 'dave')).status).toBe(
      201,
    );
    expect(await listed()).toEqual([...methods.slice(2), 'reverse_flash_call']);
    await suite.sb.advance(86_400_000);
    expect(await history.list({ phoneNumber: phone })).toEqual([]);
  });

  it("a verified session's start, copied once beside its right code and outcome, outlives others' starts for retentionDays after its verification: listed a tick before, not at it", async () => {
    const history = await boot({ history: { maxEntries: 3, retentionDays: 2 } });
    const phone = phoneNumber();
    const started = await post('start', { phone_number: phone, method: 'sms' }, 'erin');
    const [session] = suite.sb.sessionsFor(phone);
    await suite.sb.deliver(session!.request_id);
    const code = String(suite.sb.getSession(session!.request_id)!.code);
    const checked = await post('check', { verification_id: started.body.verification_id, code }, 'erin');
    expect(checked.body.verified).toBe(true);
    const verifiedAt = suite.sb.now();
    // Others' paid starts of the number push erin's start off the starts' shelf.
    for (const i of [1, 2, 3, 4]) {
      await suite.sb.advance(1000);
      expect((await post('start', { phone_number: phone, method: 'flash_call' }, `frank-${i}`)).status).toBe(
        201,
      );
    }
    const erins = async () =>
      (await history.list({ phoneNumber: phone }))
        .filter((e) => e.owner === 'erin' && e.kind === 'start')
        .map((e) => e.method);
    expect(await erins()).toEqual(['sms']);
    // The verified shelf holds the session once: its start, its right code and its outcome, each listed.
    const verifiedShelf = (await history.list({ phoneNumber: phone }))
      .filter((e) => e.owner === 'erin')
      .map((e) => [e.kind, e.check ?? e.status]);
    expect(verifiedShelf).toEqual([
      ['start', 'sent'],
      ['check', 'right'],
      ['outcome', 'verified'],
    ]);
    await suite.sb.advance(verifiedAt + 2 * 86_400_000 - 1 - suite.sb.now());
    expect(await erins()).toEqual(['sms']);
    await suite.sb.advance(1);
    expect(await erins()).toEqual([]);
  });

  it.each(['memory', 'redis'] as const)(
    "a stranger's 120 free starts and refusals leave the victim's outcome and right code listed, folded into counted entries (%s)",
    async (store) => {
      const history = await boot({
        history: {}, // 100 entries a shelf
        limits: {}, // the defaults: the stranger is refused or handed back, never charged again
        ...(store === 'redis'
          ? { store: { url: sharedRedisUrl(), keyPrefix: `history-${platform}-${Date.now()}:` } }
          : {}),
      });
      const phone = phoneNumber();
      const started = await post('start', { phone_number: phone, method: 'sms' }, 'victim');
      const [session] = suite.sb.sessionsFor(phone);
      await suite.sb.deliver(session!.request_id);
      const code = String(suite.sb.getSession(session!.request_id)!.code);
      const checked = await post('check', { verification_id: started.body.verification_id, code }, 'victim');
      expect(checked.body.verified).toBe(true);

      // 120 starts of the victim's number: mallory's own, handed back, and 30 under other names, refused.
      const methods = ['sms', 'flash_call', 'msgr1_otp'];
      const answers = new Set<number>();
      for (let i = 0; i < 120; i += 1) {
        const owner = i % 4 === 3 ? `mallory-${i}` : 'mallory';
        answers.add((await post('start', { phone_number: phone, method: methods[i % 3] }, owner)).status);
      }
      expect([...answers].some((status) => status >= 400)).toBe(true);

      const entries = await history.list({ phoneNumber: phone });
      const victims = entries.filter((e) => e.owner === 'victim').map((e) => [e.kind, e.check ?? e.status]);
      expect(victims).toEqual([
        ['start', 'sent'],
        ['check', 'right'],
        ['outcome', 'verified'],
      ]);
      // mallory's 90 starts are a few entries: each repeat is counted on its first entry.
      const mallory = entries.filter((e) => e.owner === 'mallory');
      expect(mallory.length).toBeLessThan(10);
      expect(mallory.reduce((n, e) => n + (e.count ?? 1), 0)).toBe(90);
      const folded = mallory.find((e) => (e.count ?? 1) > 1)!;
      expect(folded.lastAt).toBeInstanceOf(Date);
    },
  );

  it("list finds a number as the routes normalise it (8…, spaced, a query string's + read as a space); a non-number is a validation_error", async () => {
    const history = await boot({ history: {} });
    const phone = phoneNumber(); // +7916444…
    expect((await post('start', { phone_number: phone, method: 'sms' }, 'erin')).status).toBe(201);
    const national = `8${phone.slice(2)}`;
    const spaced = `+7 ${phone.slice(2, 5)} ${phone.slice(5, 8)}-${phone.slice(8)}`;
    const unencodedPlus = ` ${phone.slice(1)}`;
    for (const typed of [phone, national, spaced, unencodedPlus])
      expect((await history.list({ phoneNumber: typed })).map((e) => e.kind)).toEqual(['start']);
    for (const typed of ['not a number', '+7916', ''])
      await expect(history.list({ phoneNumber: typed })).rejects.toMatchObject({
        errorCode: 'validation_error',
        extra: { errors: [expect.objectContaining({ field: 'phoneNumber' })] },
      });
  });

  it('off by default: nothing is written, list answers empty', async () => {
    const history = await boot();
    const phone = phoneNumber();
    expect((await post('start', { phone_number: phone, method: 'sms' }, 'dave')).status).toBe(201);
    expect(await history.list({ phoneNumber: phone })).toEqual([]);
    expect(history.enabled).toBe(false);
  });
});
