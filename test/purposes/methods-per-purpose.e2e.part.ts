/**
 * `GET /{prefix}/methods?purpose=`, over real HTTP against the sandbox on Express and Fastify: a
 * purpose's answer lists only the methods a start of it may use (in the deployment's order, `[]` for
 * a purpose that allows none), what the start then takes; a purpose that is no purpose's name or is
 * not accepted here is the start's 400 problem, and nothing is read from the API for it.
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import type { VerificationSandbox } from '../../src/testing/index.js';
import { PURPOSE_PRESETS } from '../../src/options/purposes.options.js';
import { call, PLATFORMS, type TestApp } from '../support/verification-app.js';
import { moduleOptions } from '../webhooks/harness.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

const ALL = ['reverse_flash_call', 'flash_call', 'msgr1_otp', 'msgr2_bot', 'sms', 'operator_id'] as const;

describe.each(PLATFORMS)('GET /methods per purpose (%s)', (platform) => {
  const suite = sandboxSuite({ demoAccount: { enabledMethods: [...ALL] } });
  let sb: VerificationSandbox;
  let host: TestApp;

  beforeAll(async () => {
    sb = suite.sb;
    host = await suite.boot({
      platform,
      module: moduleOptions(sb, {
        methods: [...ALL],
        purposes: {
          login: { methods: ['sms', 'reverse_flash_call'] },
          change_phone: PURPOSE_PRESETS.noForeignMessengers,
          payout_review: { methods: [] },
          kyc: { methods: ['operator_id'] },
        },
      }),
    });
  });

  const methods = async (query: string) => {
    const res = await call(host.url, 'GET', `/verification/methods${query}`);
    return {
      status: res.status,
      body: res.body,
      type: res.headers.get('content-type'),
      methods: ((res.body.methods ?? []) as { method: string }[]).map((m) => m.method),
    };
  };

  it('without a purpose, or for a purpose of no policy, every method offered', async () => {
    expect((await methods('')).methods).toEqual([...ALL]);
    expect((await methods('?purpose=signup')).methods).toEqual([...ALL]);
  });

  it("a purpose's answer lists only the methods its policy allows, in the deployment's order", async () => {
    expect((await methods('?purpose=login')).methods).toEqual(['reverse_flash_call', 'sms']);
    expect((await methods('?purpose=change_phone')).methods).toEqual([
      'reverse_flash_call',
      'flash_call',
      'sms',
      'operator_id',
    ]);
    expect((await methods('?purpose=kyc')).methods).toEqual(['operator_id']);
    // Declared, but allowing none: an empty list, which a start of it then refuses.
    const none = await methods('?purpose=payout_review');
    expect(none.status).toBe(200);
    expect(none.methods).toEqual([]);
  });

  it('what the list offers a purpose is what its start takes: a method outside it is refused', async () => {
    const start = (method: string) =>
      call(host.url, 'POST', '/verification/start', {
        phone_number: '+79165550101',
        method,
        purpose: 'change_phone',
      });
    const refused = await start('msgr1_otp');
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({
      error_code: 'method_not_available',
      available_methods: (await methods('?purpose=change_phone')).methods,
    });
  });

  it("a purpose not accepted here, or not a purpose name, is the start's 400 problem; nothing is read", async () => {
    const reads = sb.requestCount('GET /v1/prices');
    const unknown = await methods('?purpose=payout');
    expect(unknown.status).toBe(400);
    expect(unknown.type).toMatch(/^application\/problem\+json/);
    expect(unknown.body).toMatchObject({ status: 400, error_code: 'purpose_not_allowed', purpose: 'payout' });
    for (const query of [
      '?purpose=',
      '?purpose=Step_Up',
      '?purpose=login&purpose=kyc',
      `?purpose=${'a'.repeat(33)}`,
    ]) {
      const bad = await methods(query);
      expect({ query, status: bad.status, code: bad.body.error_code }).toEqual({
        query,
        status: 400,
        code: 'validation_error',
      });
    }
    expect(sb.requestCount('GET /v1/prices')).toBe(reads);
  });
});
