/**
 * Two days' reports read one after the other: each reads its own day's `GET /v1/usage`. The usage reads
 * are spaced per day (one per interval across instances), so that yesterday's read does not hold back
 * today's: a host showing yesterday and then today (the ops page's two days) sees both days' usage and
 * drift, not today's as "not read".
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import { VerificationLedger } from '../../src/ledger/verification-ledger.service.js';
import type { VerificationSandbox } from '../../src/testing/index.js';
import type { TestApp } from '../support/verification-app.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { startHost, startSession } from '../webhooks/harness.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

describe.each(['express', 'fastify'] as const)('the ledger: two days read in a row (%s)', (platform) => {
  const suite = sandboxSuite();
  let sb: VerificationSandbox;
  let host: TestApp;
  let yesterday: string;
  let today: string;

  beforeAll(async () => {
    sb = suite.sb;
    // Two hours into a UTC day: a session charged per attempt, then another the next day.
    await sb.advance(DAY - (sb.now() % DAY) + 2 * HOUR);
    host = await suite.boot(() => startHost(platform, sb, { module: { ledger: {} } }));
    yesterday = new Date(sb.now()).toISOString().slice(0, 10);
    await startSession(host, sb, 'msgr1_otp', 'owner-1');
    await sb.advance(DAY);
    today = new Date(sb.now()).toISOString().slice(0, 10);
    await startSession(host, sb, 'msgr1_otp', 'owner-2');
    await startSession(host, sb, 'msgr1_otp', 'owner-3');
  });

  it("yesterday's report, then today's at once: each with its own day's usage and no drift", async () => {
    const ledger = host.app.get(VerificationLedger);
    expect(await ledger.report(yesterday)).toMatchObject({ drift: 0, usage: { charged: 0.9 } });
    expect(await ledger.report(today)).toMatchObject({ drift: 0, usage: { charged: 1.8 } });
  });
});
