import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { VerificationSandbox } from '../../src/testing/index.js';
import { bootstrapSampleApp, type SampleApp } from '../../sample-app/src/sample-app.js';
import { LIVE_API_VARIABLES } from '../../sample-app/src/verification-env.js';
import { call } from '../support/verification-app.js';

/** Sets the VERIFICATION_* variables for one test and puts the old values back afterwards. */
function withEnvironment(values: Partial<Record<(typeof LIVE_API_VARIABLES)[number], string>>): () => void {
  const saved = Object.fromEntries(LIVE_API_VARIABLES.map((name) => [name, process.env[name]]));
  for (const name of LIVE_API_VARIABLES) delete process.env[name];
  Object.assign(process.env, values);
  return () => {
    for (const name of LIVE_API_VARIABLES) {
      if (saved[name] === undefined) delete process.env[name];
      else process.env[name] = saved[name];
    }
  };
}

/**
 * With the four VERIFICATION_* variables set, the sample talks to that API and nothing else
 * changes. A separate sandbox process plays "the real service" here.
 */
describe('sample app: live mode from the environment', () => {
  let service: VerificationSandbox;
  let sample: SampleApp;
  let restoreEnvironment: () => void;

  beforeAll(async () => {
    service = await VerificationSandbox.start({ port: 0 });
    restoreEnvironment = withEnvironment({
      VERIFICATION_API_URL: service.url,
      VERIFICATION_API_KEY: service.demoAccount.apiKey,
      VERIFICATION_API_SECRET: service.demoAccount.apiSecret,
      VERIFICATION_WEBHOOK_SECRET: service.demoAccount.webhookSecret,
    });
    sample = await bootstrapSampleApp({ port: 0, logger: false });
    await service.updateAccount(service.demoAccount.apiKey, {
      webhookUrl: `${sample.url}/verification/webhooks`,
    });
  });
  afterAll(async () => {
    await sample?.close();
    await service?.close();
    restoreEnvironment?.();
  });

  it('says live mode and offers no simulated phone', async () => {
    expect(sample.mode).toBe('live');
    expect(sample.sandboxUrl).toBeUndefined();
    const info = await call(sample.url, 'GET', '/demo/info');
    expect(info.body.mode).toBe('live');
    const phone = await call(sample.url, 'GET', '/demo/phone?number=%2B79123456781');
    expect(phone.status).toBe(404);
    expect(phone.headers.get('content-type')).toContain('application/problem+json');
    expect(phone.body.error_code).toBe('not_found');
    const clock = await call(sample.url, 'POST', '/demo/sandbox/clock', { advance_ms: 1000 });
    expect(clock.status).toBe(404);
  });

  it('verifies through the configured API; its signed webhook is accepted; the host marks the number', async () => {
    const start = await call(sample.url, 'POST', '/verification/start', {
      phone_number: '+7 912 345-67-81',
      method: 'sms',
    });
    expect(start.status).toBe(201);
    const [session] = service.sessionsFor('+79123456781');
    expect(session.status).toBe('sent');
    await service.deliver(session.request_id);
    const check = await call(sample.url, 'POST', '/verification/check', {
      verification_id: start.body.verification_id,
      code: service.getSession(session.request_id)!.code,
    });
    expect(check.body).toMatchObject({ status: 'verified', verified: true });
    const account = await call(sample.url, 'GET', '/demo/account');
    expect(account.body.verified_numbers).toEqual([
      expect.objectContaining({ phone_number: '+7******6781', method: 'sms' }),
    ]);
    await service.webhooksIdle();
    const deliveries = service.webhookLog().filter((d) => d.request_id === session.request_id);
    expect(deliveries.map((d) => [d.event, d.status])).toEqual([['verification.verified', 200]]);
  });
});

describe('sample app: a half-configured environment', () => {
  it('refuses to boot, naming the missing variables and none of the values', async () => {
    const restore = withEnvironment({
      VERIFICATION_API_URL: 'https://api.example.test',
      VERIFICATION_API_KEY: 'key_visible_in_no_message',
    });
    try {
      const boot = bootstrapSampleApp({ port: 0, logger: false });
      await expect(boot).rejects.toThrow(
        'VERIFICATION_API_URL, VERIFICATION_API_KEY set but VERIFICATION_API_SECRET, VERIFICATION_WEBHOOK_SECRET missing',
      );
      await expect(boot).rejects.not.toThrow('key_visible_in_no_message');
    } finally {
      restore();
    }
  });
});

/**
 * Sandbox mode serves every code through its simulated phone and lets the page move the clock: it
 * must never be what a production deployment falls back to.
 */
describe('sample app: no sandbox fallback where it would be unsafe', () => {
  it('refuses to boot when the four variables are set but empty, naming them', async () => {
    const restore = withEnvironment({
      VERIFICATION_API_URL: '',
      VERIFICATION_API_KEY: '',
      VERIFICATION_API_SECRET: ' ',
      VERIFICATION_WEBHOOK_SECRET: '',
    });
    try {
      await expect(bootstrapSampleApp({ port: 0, logger: false })).rejects.toThrow(
        'VERIFICATION_API_URL, VERIFICATION_API_KEY, VERIFICATION_API_SECRET, VERIFICATION_WEBHOOK_SECRET set but empty',
      );
    } finally {
      restore();
    }
  });

  it.each([
    ['none of the variables', {}],
    ['the variables set but empty', { VERIFICATION_API_URL: '', VERIFICATION_API_KEY: '' }],
  ])('refuses sandbox mode under NODE_ENV=production with %s', async (_label, values) => {
    const restore = withEnvironment(values);
    const nodeEnv = process.env.NODE_ENV;
    process.env.NODE_ENV = 'production';
    try {
      const boot = bootstrapSampleApp({ port: 0, logger: false });
      await expect(boot).rejects.toThrow(/VERIFICATION_/);
      await expect(boot).rejects.toThrow(/production|empty/);
    } finally {
      process.env.NODE_ENV = nodeEnv;
      restore();
    }
  });

  it('still runs the sandbox on a laptop: no variables, NODE_ENV not production', async () => {
    const restore = withEnvironment({});
    let sample: SampleApp | undefined;
    try {
      sample = await bootstrapSampleApp({ port: 0, logger: false });
      expect(sample.mode).toBe('sandbox');
    } finally {
      await sample?.close();
      restore();
    }
  });
});
