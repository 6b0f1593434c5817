/**
 * `VerificationService.getVerifiedPhone` is the check the README tells hosts to make on the server
 * before trusting a number: it must give the number only for a verified session, asked from the
 * API, and only to the handle's owner. A started, delivered, failed or expired session, a forged
 * handle and another owner's handle all give null. The platform does not matter here (no route).
 */
import { afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { VerificationService } from '../../src/verification/verification.service.js';
import type { VerificationSandbox } from '../../src/testing/index.js';
import type { TestApp } from '../support/verification-app.js';
import { drive, startHost, startSession, type Outcome } from '../webhooks/harness.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

describe('getVerifiedPhone: the number only for a verified session of the same owner', () => {
  const suite = sandboxSuite();
  let sb: VerificationSandbox;
  let host: TestApp;
  let service: VerificationService;

  beforeAll(async () => {
    sb = suite.sb;
    host = await suite.boot(() => startHost('express', sb, { receiveWebhooks: false }));
    service = host.app.get(VerificationService);
  });
  afterEach(() => sb.clearFaults());

  it('a started session is not verified, nor one whose code was only delivered', async () => {
    const s = await startSession(host, sb, 'sms', 'user-a');
    expect(await service.getVerifiedPhone(s.verificationId, 'user-a')).toBeNull();
    await sb.deliver(s.requestId);
    expect(await service.getVerifiedPhone(s.verificationId, 'user-a')).toBeNull();
  });

  it.each(['failed', 'expired'] as Outcome[])('a %s session is not verified', async (outcome) => {
    const s = await startSession(host, sb, 'sms', 'user-b');
    await drive(sb, s, outcome);
    expect(await service.getVerifiedPhone(s.verificationId, 'user-b')).toBeNull();
  });

  it('a verified session gives its E.164 number to its owner only, asked from the API', async () => {
    const s = await startSession(host, sb, 'sms', 'user-c');
    await drive(sb, s, 'verified');
    sb.resetRequestCounts();
    expect(await service.getVerifiedPhone(s.verificationId, 'user-c')).toBe(s.phone);
    // The API is the source of truth: each answer is read from it, not from the module's record.
    expect(sb.requestCount('GET /v1/verify/:id')).toBe(1);
    expect(await service.getVerifiedPhone(s.verificationId, 'user-d')).toBeNull();
    expect(await service.getVerifiedPhone(s.verificationId)).toBeNull();
  });

  it('a forged or altered handle gives null without asking the API', async () => {
    const s = await startSession(host, sb, 'sms', 'user-e');
    await drive(sb, s, 'verified');
    sb.resetRequestCounts();
    const altered = s.verificationId.slice(0, -2) + (s.verificationId.endsWith('A') ? 'BB' : 'AA');
    expect(await service.getVerifiedPhone(altered, 'user-e')).toBeNull();
    expect(await service.getVerifiedPhone('not-a-handle', 'user-e')).toBeNull();
    expect(sb.requestCount('GET /v1/verify/:id')).toBe(0);
  });
});
