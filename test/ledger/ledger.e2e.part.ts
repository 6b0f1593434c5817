/**
 * The ledger over a played sandbox day, on MemoryStore and on Redis: what it expects per method and
 * operator prefix against what the sandbox debited; the day's usage agreeing; a recalculated charge
 * (the sandbox's control) making a drift, announced once the day is final and not a tick before; the
 * balance side; the CSV export; and the usage reads it shares with the spend cap.
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { VerificationBalanceWatch } from '../../src/account/balance-watch.service.js';
import { LEDGER_FINAL_AFTER_MS, VerificationLedger } from '../../src/ledger/verification-ledger.service.js';
import type { LedgerDriftEvent } from '../../src/core/verification-events.js';
import type { VerificationSandbox } from '../../src/testing/index.js';
import { sharedRedisUrl } from '../support/redis-server.js';
import { call, type TestApp } from '../support/verification-app.js';
import {
  apiCheck,
  reconcilerOf,
  sendCode,
  settle,
  startHost,
  startSession,
  type Outcome,
  type StartedSession,
} from '../webhooks/harness.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

interface Plan {
  method: StartedSession['method'];
  outcome: Outcome;
  delivered: boolean;
}

/** Each billing rule charged and not charged: SMS undelivered, a reverse call expired, a per-attempt start expired. */
const PLANS: Plan[] = [
  { method: 'sms', outcome: 'verified', delivered: true },
  { method: 'sms', outcome: 'expired', delivered: true },
  { method: 'sms', outcome: 'expired', delivered: false },
  { method: 'flash_call', outcome: 'failed', delivered: true },
  { method: 'msgr1_otp', outcome: 'expired', delivered: false },
  { method: 'msgr2_bot', outcome: 'verified', delivered: true },
  { method: 'reverse_flash_call', outcome: 'verified', delivered: false },
  { method: 'reverse_flash_call', outcome: 'expired', delivered: false },
  { method: 'operator_id', outcome: 'failed', delivered: false },
];

/** RUB expected per method (the sandbox's default prices). */
const EXPECTED: Record<string, number> = {
  sms: 6,
  flash_call: 0.8,
  msgr1_otp: 0.9,
  msgr2_bot: 1,
  reverse_flash_call: 0.25,
  operator_id: 2,
};

type Played = StartedSession & Plan;

async function play(sb: VerificationSandbox, host: TestApp): Promise<Played[]> {
  const sessions: Played[] = [];
  for (const [i, plan] of PLANS.entries())
    sessions.push({ ...(await startSession(host, sb, plan.method, `owner-${i}`)), ...plan });
  for (const s of sessions.filter((s) => s.delivered)) await sendCode(sb, s);
  await sb.advance(3_000);
  // The page follows its session and sees the delivery (what the on-delivery rule charges on).
  for (const s of sessions.filter((s) => s.delivered))
    await call(host.url, 'GET', `/verification/status/${s.verificationId}`, undefined, { 'x-user': s.owner });
  await sb.advance(2_000);
  for (const s of sessions.filter((s) => s.outcome !== 'expired')) {
    const code = () => sb.getSession(s.requestId)!.code!;
    if (s.method === 'reverse_flash_call') await sb.call(s.requestId, s.phone);
    else if (s.method === 'operator_id') await sb.operator(s.requestId, 'fail');
    else if (s.outcome === 'verified') await apiCheck(sb, s.requestId, code());
    else {
      const wrong =
        code() === '0'.repeat(code().length) ? '1'.repeat(code().length) : '0'.repeat(code().length);
      while (sb.getSession(s.requestId)!.status !== 'failed') await apiCheck(sb, s.requestId, wrong);
    }
  }
  await settle(sb);
  await sb.advance(301_000);
  await settle(sb);
  for (let round = 0; round < 3; round++) {
    await sb.advance(16_000);
    await reconcilerOf(host).runOnce();
    await settle(sb);
  }
  for (const s of sessions)
    expect([s.requestId, sb.getSession(s.requestId)!.status]).toEqual([s.requestId, s.outcome]);
  return sessions;
}

function billedBySandbox(sb: VerificationSandbox, sessions: Played[]): Record<string, number> {
  const billed: Record<string, number> = {};
  for (const s of sessions) {
    const view = sb.getSession(s.requestId)!;
    billed[s.method] = (billed[s.method] ?? 0) + (view.charged ? Math.round(view.cost.amount * 100) : 0);
  }
  return Object.fromEntries(Object.entries(billed).map(([m, k]) => [m, k / 100]));
}

const driftEvents = (host: TestApp) =>
  host.opsEvents
    .filter((e) => e.name === 'verification.ledger_drift')
    .map((e) => e.payload as LedgerDriftEvent);

describe.each(['memory', 'redis'] as const)('the ledger over a played day (%s store)', (storeKind) => {
  const suite = sandboxSuite();
  let sb: VerificationSandbox;
  let host: TestApp;
  let sessions: Played[];
  let day: string;
  let dayEnds: number;

  beforeAll(async () => {
    sb = suite.sb;
    // Two hours into a UTC day: the day's sessions stay in it.
    await sb.advance(DAY - (sb.now() % DAY) + 2 * HOUR);
    day = new Date(sb.now()).toISOString().slice(0, 10);
    dayEnds = Date.parse(`${day}T00:00:00Z`) + DAY;
    host = await suite.boot(() =>
      startHost('express', sb, {
        module: {
          ledger: { tolerance: 0.5 },
          balanceWatch: { intervalMs: 3_600_000, threshold: 0 },
          ...(storeKind === 'redis'
            ? { store: { url: sharedRedisUrl(), keyPrefix: `pv-ledger:${randomUUID()}:` } }
            : {}),
        },
      }),
    );
    sessions = await play(sb, host);
  });

  it('expects per method exactly what the sandbox debited, by each billing rule, in the operator prefix’s row', async () => {
    const report = await host.app.get(VerificationLedger).report(day);
    const byMethod = Object.fromEntries(report.rows.map((r) => [r.method, r.expected]));
    expect(byMethod).toEqual(billedBySandbox(sb, sessions));
    expect(byMethod).toEqual(EXPECTED);
    expect(new Set(report.rows.map((r) => r.prefix))).toEqual(new Set(['+7912']));
    expect(report.rows.find((r) => r.method === 'sms')).toMatchObject({
      started: 3,
      delivered: 2,
      verified: 1,
      expired: 2,
      failed: 0,
      expected: 6,
      costPerVerified: 6,
    });
    expect(report.totals).toMatchObject({ started: 9, verified: 3, expected: 10.95 });
  });

  it('agrees with the day’s GET /v1/usage: no drift, nothing announced', async () => {
    const report = await host.app.get(VerificationLedger).report(day);
    expect(report).toMatchObject({
      drift: 0,
      beyondTolerance: false,
      final: false,
      usage: { charged: 10.95 },
    });
    expect(driftEvents(host)).toEqual([]);
  });

  it('a recalculated charge is a drift; announced once the day is final, not a tick before, and once', async () => {
    const ledger = host.app.get(VerificationLedger);
    const sms = sessions.find((s) => s.method === 'sms' && s.outcome === 'verified')!;
    await sb.recalculate(sms.requestId, 0);
    // The open day's reading is a minute old at most: the drift shows once it is read again.
    await sb.advance(61_000);
    expect(await ledger.report(day)).toMatchObject({ drift: -3, beyondTolerance: true, final: false });
    expect(driftEvents(host)).toEqual([]);

    await sb.advance(dayEnds + LEDGER_FINAL_AFTER_MS - 1 - sb.now());
    expect((await ledger.report(day)).final).toBe(false);
    await host.app.get(VerificationBalanceWatch).checkNow();
    expect(driftEvents(host)).toEqual([]);

    await sb.advance(1);
    // The balance watch's tick reconciles yesterday, now final.
    await ledger.reconcileClosedDay();
    const announced = [
      expect.objectContaining({
        source: 'usage',
        date: day,
        expected: 10.95,
        charged: 7.95,
        drift: -3,
        tolerance: 0.5,
      }),
    ];
    expect(driftEvents(host)).toEqual(announced);
    expect((await ledger.report(day)).final).toBe(true);
    expect(driftEvents(host)).toEqual(announced);
  });

  it('exports the day as CSV, the operator prefix defused for spreadsheets', async () => {
    const csv = await host.app.get(VerificationLedger).csv(day);
    const lines = csv.split('\r\n');
    expect(lines[0]).toBe(
      'date,method,prefix,started,delivered,verified,expired,failed,expected,cost_per_verified,currency',
    );
    expect(lines).toContain(`${day},sms,'+7912,3,2,1,2,0,6,6,RUB`);
    expect(lines.at(-2)).toBe(`${day},total,,9,4,3,4,2,10.95,3.65,RUB`);
    expect(lines.at(-1)).toBe('');
  });

  it('refuses a date that is not a calendar day or is after today, naming the field', async () => {
    const ledger = host.app.get(VerificationLedger);
    await expect(ledger.report('2026-02-31')).rejects.toThrow('ledger.report: "date" is not a calendar date');
    await expect(ledger.report('tomorrow')).rejects.toThrow('"date" must be a date like 2026-01-31');
    const tomorrow = new Date(sb.now() + DAY).toISOString().slice(0, 10);
    await expect(ledger.csv(tomorrow)).rejects.toThrow('"date" is after today');
  });
});

describe('the balance side: a debit the ledger did not count', () => {
  const suite = sandboxSuite();
  let sb: VerificationSandbox;
  let host: TestApp;

  beforeAll(async () => {
    sb = suite.sb;
    host = await suite.boot(() =>
      startHost('express', sb, {
        module: { ledger: {}, balanceWatch: { intervalMs: 3_600_000, threshold: 0 } },
      }),
    );
  });

  it('counted charges explain the fall; a larger fall is announced on the second reading in a row', async () => {
    const watch = host.app.get(VerificationBalanceWatch);
    await watch.checkNow();
    const s = await startSession(host, sb, 'msgr1_otp');
    // Counted by the start itself (charged per attempt), before anything observes the session.
    expect((await host.app.get(VerificationLedger).report()).totals).toMatchObject({
      started: 1,
      expected: 0.9,
    });
    await watch.checkNow();
    expect(driftEvents(host)).toEqual([]);

    await sb.recalculate(s.requestId, 3.9); // 3 RUB more debited than the ledger counted
    await watch.checkNow();
    expect(driftEvents(host)).toEqual([]);
    await watch.checkNow();
    expect(driftEvents(host)).toEqual([
      expect.objectContaining({ source: 'balance', expected: 0, charged: 3, drift: 3, tolerance: 1 }),
    ]);
    await watch.checkNow();
    expect(driftEvents(host)).toHaveLength(1);
  });

  it('a rise (a top-up, a credit) is no drift', async () => {
    const watch = host.app.get(VerificationBalanceWatch);
    await sb.updateAccount(sb.demoAccount.apiKey, { balance: 5_000 });
    await watch.checkNow();
    await watch.checkNow();
    expect(driftEvents(host)).toHaveLength(1);
  });
});
