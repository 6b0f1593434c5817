/**
 * Attack (lane attack-i, telling the reviewer's number from a real one by its status): docs/test-numbers.md
 * says a test number's routes answer "as they would for a real session of the same method, with the
 * same fields of the same shapes". A real SMS session goes `sent` -> `delivered` once the code reaches
 * the phone (the API's status table; a second on the sandbox, seconds in life: 98 % of SMS are
 * delivered); a test session stays `sent` until it is verified or expires, whatever its outcome. A
 * stranger starts each candidate number once (anonymous, within every limit) and reads its status a
 * few seconds later (`GET /status/:id`, or the status stream): the number whose session never reads
 * `delivered` is the reviewer's.
 *
 * Expected: a test session of a method the API delivers reads `delivered` as a real one does (e.g. at
 * its first read after a delivery delay), or the docs name the difference. Low (information that
 * targets the reviewer's number). Failed on the code it was written against; passes since its fix.
 */
import { describe, expect, it } from '@jest/globals';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { call, createTestApp, PLATFORMS, type Platform } from '../support/verification-app.js';
import { moduleOptions } from '../webhooks/harness.js';

const TEST_NUMBER = '+79990004611';

describe.each(PLATFORMS)('a status read tells the test number apart (%s)', (platform: Platform) => {
  const suite = sandboxSuite();

  it('a real SMS session reads delivered seconds after its start; a test one never does', async () => {
    // An account whose SMS reach the phone, as in life.
    const account = await suite.sb.createAccount({ balance: 100, autoDeliver: true });
    const base = moduleOptions(suite.sb, {
      limits: {},
      owner: undefined,
      testNumbers: { numbers: [{ phoneNumber: TEST_NUMBER, code: '246810' }] },
    });
    suite.host = await createTestApp({
      platform,
      trustProxy: true,
      module: {
        ...base,
        api: { ...base.api, apiKey: account.apiKey, apiSecret: account.apiSecret },
        webhooks: { secret: account.webhookSecret },
      },
    });
    const start = async (phone: string, ip: string) => {
      const started = await call(
        suite.host!.url,
        'POST',
        '/verification/start',
        { phone_number: phone, method: 'sms' },
        { 'x-forwarded-for': ip },
      );
      expect(started.status).toBe(201);
      return String(started.body.verification_id);
    };
    const status = async (id: string, ip: string) => {
      const read = await call(suite.host!.url, 'GET', `/verification/status/${id}`, undefined, {
        'x-forwarded-for': ip,
      });
      expect(read.status).toBe(200);
      return read.body.status;
    };

    const real = await start(platform === 'express' ? '+79161234611' : '+79161234612', '74.8.1.7');
    const test = await start(TEST_NUMBER, '74.9.1.7');
    // Ten seconds on (the sandbox delivers an SMS in one), each read once, from its starter.
    await suite.sb.advance(10_000);
    const read = { real: await status(real, '74.8.1.7'), test: await status(test, '74.9.1.7') };
    expect(read.real).toBe('delivered');
    expect(read.test).toBe(read.real);
  });
});
