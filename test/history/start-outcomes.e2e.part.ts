/**
 * How a start ends, as the host reads it back: its history entry (a paid start's has no `resumed` field, a
 * handed-back one says `resumed: true`) and the day's ledger (a paid start counted at once, before anything
 * happens to its session; the caller's pending session handed back is not a second start); and a check's entry
 * says a right code only when the API's answer verified.
 */
import { describe, expect, it } from '@jest/globals';
import { VerificationHistory } from '../../src/history/verification-history.service.js';
import { VerificationLedger } from '../../src/ledger/verification-ledger.service.js';
import { SandboxControlClient } from '../../src/testing/index.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { call, ONE_PLATFORM, type Platform } from '../support/verification-app.js';
import { nextPhone, startAccountHost } from '../webhooks/harness.js';

describe.each(ONE_PLATFORM)("a start's history entry and ledger count (%s)", (platform: Platform) => {
  const suite = sandboxSuite();

  it('a paid start is counted by the ledger at once and its entry has no resumed field; the same start handed back says resumed and counts nothing more', async () => {
    suite.host = await startAccountHost(platform, suite.sb, {
      module: { history: {}, ledger: {}, limits: { spendCap: false, pumping: false } },
    });
    const history = suite.host.app.get(VerificationHistory);
    const ledger = suite.host.app.get(VerificationLedger);
    const phone = nextPhone();
    const start = () =>
      call(
        suite.host!.url,
        'POST',
        '/verification/start',
        { phone_number: phone, method: 'sms' },
        { 'x-user': 'nina' },
      );
    const first = await start();
    expect([first.status, first.body.resumed]).toEqual([201, false]);
    expect((await ledger.report()).totals.started).toBe(1);
    const again = await start();
    expect([again.status, again.body.resumed]).toEqual([201, true]);
    expect((await ledger.report()).totals.started).toBe(1);

    const entries = await history.list({ phoneNumber: phone });
    expect(entries.map(({ kind, status, resumed }) => ({ kind, status, resumed }))).toStrictEqual([
      { kind: 'start', status: 'sent', resumed: undefined },
      { kind: 'start', status: 'sent', resumed: true },
    ]);
    expect(entries[0]).not.toHaveProperty('resumed');
  });

  it("a code the API takes without verifying yet (operator_id's SMS leg) is a check entry that says no right code", async () => {
    suite.host = await startAccountHost(platform, suite.sb, {
      module: { history: {}, limits: { spendCap: false, pumping: false } },
    });
    const history = suite.host.app.get(VerificationHistory);
    const phone = nextPhone();
    const as = { 'x-user': 'olga' };
    const started = await call(
      suite.host.url,
      'POST',
      '/verification/start',
      { phone_number: phone, method: 'operator_id' },
      as,
    );
    expect(started.status).toBe(201);
    const requestId = suite.sb.sessionsFor(phone)[0]!.request_id;
    await new SandboxControlClient(suite.sb.url).operator(requestId, 'fallback');
    await suite.sb.advance(2500);
    const id = started.body.verification_id as string;
    await call(suite.host.url, 'GET', `/verification/status/${id}`, undefined, as);
    const code = String(suite.sb.getSession(requestId)!.code);
    const checked = await call(
      suite.host.url,
      'POST',
      '/verification/check',
      { verification_id: id, code },
      as,
    );
    expect([checked.status, checked.body.status]).toEqual([200, 'sent']);
    const checks = (await history.list({ phoneNumber: phone })).filter((e) => e.kind === 'check');
    expect(checks.map(({ status, check }) => ({ status, check }))).toStrictEqual([
      { status: 'sent', check: undefined },
    ]);
  });
});
