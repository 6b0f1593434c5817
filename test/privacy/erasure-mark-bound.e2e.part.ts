/**
 * The erasure mark at its bound. An instance that lost its records (a restart on a fresh MemoryStore, an
 * evicted Redis key) rebuilds a session from its handle and the API for as long as the session's record
 * would have been kept: its expiry and the 24 h retention. An erasure there finds no record to remove, so
 * only its mark keeps the subject forgotten: it must last the retention and a session's longest life
 * (`RECORD_RETENTION_MS + MAX_SESSION_TTL_MS`), not the retention alone, or getVerifiedPhone answers the
 * erased number again in the last minutes before the rebuild's end.
 */
import { afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { RECORD_RETENTION_MS } from '../../src/sessions/session-record.repository.js';
import type { VerificationSandbox } from '../../src/testing/index.js';
import { VerificationStore } from '../../src/store/verification-store.interface.js';
import { VerificationErasure } from '../../src/verification/verification-erasure.js';
import { VerificationService } from '../../src/verification/verification.service.js';
import { call, type TestApp } from '../support/verification-app.js';
import { apiCheck, startHost, startSession } from '../webhooks/harness.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

describe('an erasure mark outlives every rebuild of the subject’s sessions', () => {
  const suite = sandboxSuite();
  let sb: VerificationSandbox;
  const hosts: TestApp[] = [];
  beforeAll(() => {
    sb = suite.sb;
  });
  afterEach(async () => {
    for (const host of hosts.splice(0)) await host.close();
  });
  const boot = async () => {
    // Sessions of the longest life (ten minutes); claims of the default ten minutes, far shorter.
    const host = await startHost('express', sb, { receiveWebhooks: false, module: { expirySeconds: 600 } });
    hosts.push(host);
    return host;
  };

  it.each(['owner', 'phoneNumber'] as const)(
    'forget({ %s }) on a restarted instance: a tick before the session’s expiry + retention, getVerifiedPhone still answers null (a session not erased answers its number, and null at the bound)',
    async (by) => {
      const before = await boot();
      const erased = await startSession(before, sb, 'sms', `mark-bound-${by}`);
      const kept = await startSession(before, sb, 'sms', `mark-bound-kept-${by}`);
      for (const s of [erased, kept]) {
        await sb.deliver(s.requestId);
        expect(await apiCheck(sb, s.requestId, sb.getSession(s.requestId)!.code!)).toBe(200);
      }
      await hosts.splice(0)[0]!.close();
      // A minute on, the restarted instance (its store empty) is asked to erase the subject: it finds nothing.
      const after = await boot();
      await sb.advance(60_000);
      const report = await after.app
        .get(VerificationErasure, { strict: false })
        .forget(by === 'owner' ? { owner: erased.owner } : { phoneNumber: erased.phone });
      expect(report.sessions).toBe(0);

      // The last tick a record of the session would be kept: nine minutes past the retention since the erasure.
      const end = Date.parse(sb.getSession(erased.requestId)!.expires_at) + RECORD_RETENTION_MS;
      await sb.advance(end - 1 - sb.now());
      const service = after.app.get(VerificationService);
      expect({
        erased: await service.getVerifiedPhone(erased.verificationId, erased.owner),
        kept: await service.getVerifiedPhone(kept.verificationId, kept.owner),
      }).toEqual({ erased: null, kept: kept.phone });
      // At the bound the session is past its retention for every handle.
      await sb.advance(1);
      expect(await service.getVerifiedPhone(kept.verificationId, kept.owner)).toBeNull();
    },
  );

  it('forget({ owner }) whose index names a session whose record is gone (an evicted key): the rest is erased, the report counts what was found', async () => {
    const host = await boot();
    const [gone, kept] = [
      await startSession(host, sb, 'sms', 'mark-evicted'),
      await startSession(host, sb, 'sms', 'mark-evicted'),
    ];
    await host.app
      .get<VerificationStore>(VerificationStore, { strict: false })
      .delete(`session:{${gone.requestId}}`);
    const report = await host.app
      .get(VerificationErasure, { strict: false })
      .forget({ owner: 'mark-evicted' });
    expect(report).toMatchObject({ sessions: 1, liveSessions: 1 });
    const status = await call(host.url, 'GET', `/verification/status/${kept.verificationId}`, undefined, {
      'x-user': kept.owner,
    });
    expect(status.status).toBe(404);
  });

  it.each(['owner', 'phoneNumber'] as const)(
    'forget({ %s }) on the instance holding the records: its handle stays 404 until the session could no longer be rebuilt; a second erasure finds nothing left',
    async (by) => {
      const host = await boot();
      const s = await startSession(host, sb, 'sms', `mark-same-${by}`);
      const subject = by === 'owner' ? { owner: s.owner } : { phoneNumber: s.phone };
      await sb.advance(60_000);
      const erasure = host.app.get(VerificationErasure, { strict: false });
      const first = await erasure.forget(subject);
      expect(first).toMatchObject({ sessions: 1, liveSessions: 1 });
      expect(first.counters).toBeGreaterThan(0);
      expect(await erasure.forget(subject)).toEqual({
        sessions: 0,
        liveSessions: 0,
        historyEntries: 0,
        counters: 0,
      });
      const status = () =>
        call(host.url, 'GET', `/verification/status/${s.verificationId}`, undefined, { 'x-user': s.owner });
      // The last tick the API's session could be rebuilt from its handle: nine minutes past the retention.
      const end = Date.parse(sb.getSession(s.requestId)!.expires_at) + RECORD_RETENTION_MS;
      await sb.advance(end - 1 - sb.now());
      const late = await status();
      expect({ status: late.status, error: late.body.error_code }).toEqual({
        status: 404,
        error: 'not_found',
      });
    },
  );
});
