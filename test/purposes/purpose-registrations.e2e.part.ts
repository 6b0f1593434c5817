/**
 * Purposes per registration: each named registration resolves its own `purposes`, so a purpose one
 * declares is refused by the other (400 `purpose_not_allowed`), and a built-in purpose follows each
 * one's own policy (north narrows `step_up` to SMS; south keeps every method for it).
 */
import { describe, expect, it } from '@jest/globals';
import { VerificationModule } from '../../src/module/verification.module.js';
import type { VerificationModuleOptions } from '../../src/options/verification.options.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { call, createTestApp, PLATFORMS, type Platform } from '../support/verification-app.js';
import { moduleOptions } from '../webhooks/harness.js';

let serial = 0;
const phoneNumber = () =>
  `+7916446${String(process.pid % 100).padStart(2, '0')}${String(++serial % 100).padStart(2, '0')}`;

describe.each(PLATFORMS)('purposes per registration (%s)', (platform: Platform) => {
  const suite = sandboxSuite();

  async function registration(
    name: string,
    purposes: VerificationModuleOptions['purposes'],
  ): Promise<VerificationModuleOptions> {
    const account = await suite.sb.createAccount({ balance: 100 });
    return {
      ...moduleOptions(suite.sb, {}, account),
      name,
      purposes,
      routes: { prefix: `${name}/verification` },
    };
  }

  it("each registration takes its own purposes: declared at one, refused at the other; a built-in one follows each one's policy", async () => {
    suite.host = await createTestApp({
      platform,
      module: VerificationModule.forRoot(
        await registration('north', { kyc: { methods: ['sms'] }, step_up: { methods: ['sms'] } }),
      ),
      imports: [VerificationModule.forRoot(await registration('south', undefined))],
    });
    const start = (prefix: string, body: Record<string, unknown>) =>
      call(suite.host!.url, 'POST', `/${prefix}/verification/start`, body, { 'x-user': 'dana' });
    expect(
      (await start('north', { phone_number: phoneNumber(), purpose: 'kyc', method: 'sms' })).status,
    ).toBe(201);
    expect(
      (await start('south', { phone_number: phoneNumber(), purpose: 'kyc', method: 'sms' })).body,
    ).toMatchObject({
      status: 400,
      error_code: 'purpose_not_allowed',
    });
    expect(
      (await start('north', { phone_number: phoneNumber(), purpose: 'step_up', method: 'flash_call' })).body,
    ).toMatchObject({ status: 400, error_code: 'method_not_available', available_methods: ['sms'] });
    expect(
      (await start('south', { phone_number: phoneNumber(), purpose: 'step_up', method: 'flash_call' }))
        .status,
    ).toBe(201);
  });
});
