/**
 * A test session's late reads: its entries are kept an hour past its end (RETENTION_MS of the test
 * session store), counted from its expiry, not from its start: a status page that comes back late (a
 * laptop woken, a tab restored) is told the session expired, as a real session's would be, instead of
 * a 404 for a verification it was following.
 */
import { describe, expect, it } from '@jest/globals';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { call, PLATFORMS, type Platform } from '../support/verification-app.js';
import { startAccountHost } from '../webhooks/harness.js';

const HOUR = 3_600_000;
const CODE = '246810';

describe.each(PLATFORMS)('test sessions read late (%s)', (platform: Platform) => {
  const suite = sandboxSuite();
  const reviewer = platform === 'express' ? '+79990000021' : '+79990000022';

  /** A host with the reviewer's test number, and rita's SMS start of it: its answer and when it expires. */
  async function startReviewerSession() {
    const host = (suite.host = await startAccountHost(platform, suite.sb, {
      module: { testNumbers: { numbers: [{ phoneNumber: reviewer, code: CODE }] } },
    }));
    const started = await call(
      host.url,
      'POST',
      '/verification/start',
      { phone_number: reviewer, method: 'sms' },
      { 'x-user': 'rita' },
    );
    expect(started.status).toBe(201);
    const expiresAt = Date.parse(String(started.body.expires_at));
    return { host, started, expiresAt };
  }

  it("a status read one tick before an hour past the session's expiry answers expired, not 404", async () => {
    const { host, started, expiresAt } = await startReviewerSession();
    // Past an hour from the start (and from its last write), an hour from its expiry less a tick.
    await suite.sb.advance(expiresAt + HOUR - 1 - suite.sb.now());
    const late = await call(
      host.url,
      'GET',
      `/verification/status/${started.body.verification_id}`,
      undefined,
      { 'x-user': 'rita' },
    );
    expect(late.status).toBe(200);
    expect(late.body).toMatchObject({ status: 'expired', verified_at: null, awaiting_code: false });
  });

  it("at an hour past the session's expiry its entries are gone: its status and check answer 404", async () => {
    const { host, started, expiresAt } = await startReviewerSession();
    await suite.sb.advance(expiresAt + HOUR - suite.sb.now());
    const id = started.body.verification_id;
    const late = await call(host.url, 'GET', `/verification/status/${id}`, undefined, {
      'x-user': 'rita',
    });
    expect([late.status, late.body.error_code]).toStrictEqual([404, 'not_found']);
  });
});
