/**
 * Cost per verified user, per method: sessions of every method started through the module and played
 * by the sandbox's control client on its frozen clock to verified, failed or expired; the figures
 * `methodStats()` reads back (on MemoryStore and on Redis), checked against the plan and against
 * what the sandbox itself debited; and two instances on one Redis, each seeing every webhook and
 * polling every session, counting each transition once.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Registry } from 'prom-client';
import { VerificationAccountService } from '../../src/account/verification-account.service.js';
import type { MethodFigures } from '../../src/account/method-figures.js';
import { MethodStats } from '../../src/account/method-stats.service.js';
import type { VerificationSandbox } from '../../src/testing/index.js';
import { sharedRedisUrl } from '../support/redis-server.js';
import { call, type TestApp } from '../support/verification-app.js';
import {
  apiCheck,
  nextPhone,
  reconcilerOf,
  sendCode,
  settle,
  startAccountHost,
  startHost,
  startSession,
  type Outcome,
  type StartedSession,
} from '../webhooks/harness.js';
import { startInstance, uniqueKeyPrefix, type Instance } from '../multi-instance/deployment.js';
import { seededRandom, WebhookFanout } from '../multi-instance/webhook-fanout.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/**
 * The figures are kept per UTC day, and the frozen clock starts at real time: a day played from just
 * before midnight would land in two days and `days: 1` would see half of it. Start at least 2 h before one.
 */
async function awayFromMidnight(sb: VerificationSandbox): Promise<void> {
  const intoDay = sb.now() % DAY;
  if (intoDay > DAY - 2 * HOUR) await sb.advance(DAY - intoDay + HOUR);
}

/** One planned session: how it ends, and whether its code or call goes out (and a poll sees it) first. */
interface Plan {
  method: StartedSession['method'];
  outcome: Outcome;
  /** `seen`: delivered and a status poll shows it; `unseen`: delivered, no poll before the outcome; `never`. */
  delivery: 'seen' | 'unseen' | 'never';
}

const PLANS: Plan[] = [
  { method: 'sms', outcome: 'verified', delivery: 'seen' },
  { method: 'sms', outcome: 'verified', delivery: 'unseen' },
  { method: 'sms', outcome: 'failed', delivery: 'seen' },
  { method: 'sms', outcome: 'expired', delivery: 'seen' },
  { method: 'sms', outcome: 'expired', delivery: 'never' },
  { method: 'flash_call', outcome: 'verified', delivery: 'seen' },
  { method: 'flash_call', outcome: 'failed', delivery: 'seen' },
  { method: 'flash_call', outcome: 'expired', delivery: 'never' },
  { method: 'msgr1_otp', outcome: 'verified', delivery: 'unseen' },
  { method: 'msgr1_otp', outcome: 'expired', delivery: 'never' },
  { method: 'msgr2_bot', outcome: 'verified', delivery: 'seen' },
  { method: 'msgr2_bot', outcome: 'expired', delivery: 'never' },
  { method: 'reverse_flash_call', outcome: 'verified', delivery: 'never' },
  { method: 'reverse_flash_call', outcome: 'verified', delivery: 'never' },
  { method: 'reverse_flash_call', outcome: 'expired', delivery: 'never' },
  { method: 'operator_id', outcome: 'verified', delivery: 'never' },
  { method: 'operator_id', outcome: 'failed', delivery: 'never' },
];

const rub = (amount: number) => ({ amount, currency: 'RUB' });

/**
 * What the plan must produce. Every verification happens 12 s after its start: all in the
 * (10 s, 20 s] bucket, whose middle is 15 s. A code method (operator_id's approval included) that
 * is verified was delivered; a reverse flash call never is.
 */
const PLANNED: Record<string, Partial<MethodFigures>> = {
  sms: {
    started: 5,
    delivered: 4,
    verified: 2,
    failed: 1,
    expired: 2,
    verifiedRate: 0.4,
    medianTimeToVerifyMs: 15_000,
    charged: rub(12),
    costPerVerified: rub(6),
  },
  flash_call: {
    started: 3,
    delivered: 2,
    verified: 1,
    failed: 1,
    expired: 1,
    charged: rub(1.6),
    costPerVerified: rub(1.6),
  },
  msgr1_otp: {
    started: 2,
    delivered: 1,
    verified: 1,
    expired: 1,
    charged: rub(1.8),
    costPerVerified: rub(1.8),
  },
  msgr2_bot: { started: 2, delivered: 1, verified: 1, expired: 1, charged: rub(1), costPerVerified: rub(1) },
  reverse_flash_call: {
    started: 3,
    delivered: 0,
    verified: 2,
    expired: 1,
    charged: rub(0.5),
    costPerVerified: rub(0.25),
  },
  operator_id: { started: 2, delivered: 1, verified: 1, failed: 1, charged: rub(4), costPerVerified: rub(4) },
};

const NONE = { started: 0, delivered: 0, verified: 0, failed: 0, expired: 0 };
const EXPECTED = Object.fromEntries(
  Object.entries(PLANNED).map(([method, figures]) => [method, { ...NONE, ...figures }]),
) as Record<string, typeof NONE & Partial<MethodFigures>>;

interface Played extends StartedSession, Plan {}

/** The hosts a scenario drives: sessions start on them in turn, and every one of them polls. */
interface Deployment {
  hosts: TestApp[];
}

async function play(sb: VerificationSandbox, deployment: Deployment): Promise<Played[]> {
  const { hosts } = deployment;
  const sessions: Played[] = [];
  for (const [i, plan] of PLANS.entries())
    sessions.push({
      ...(await startSession(hosts[i % hosts.length]!, sb, plan.method, `owner-${i}`)),
      ...plan,
    });

  // The code or call goes out; a frontend on every host polls the status and sees it.
  for (const s of sessions.filter((s) => s.delivery !== 'never')) await sendCode(sb, s);
  await sb.advance(3_000);
  await Promise.all(
    sessions
      .filter((s) => s.delivery === 'seen')
      .flatMap((s) =>
        hosts.map((host) =>
          call(host.url, 'GET', `/verification/status/${s.verificationId}`, undefined, { 'x-user': s.owner }),
        ),
      ),
  );
  for (const s of sessions.filter((s) => s.delivery === 'seen'))
    expect({ id: s.requestId, status: sb.getSession(s.requestId)!.status }).toEqual({
      id: s.requestId,
      status: 'delivered',
    });

  // 12 s after the start, the users verify or fail.
  await sb.advance(9_000);
  for (const s of sessions.filter((s) => s.outcome !== 'expired')) await finish(sb, s);
  await settle(sb);

  // The rest expire; the reconcilers of every host look at what is still owed.
  await sb.advance(301_000);
  await settle(sb);
  for (let round = 0; round < 3; round++) {
    await sb.advance(16_000);
    await Promise.all(hosts.map((host) => reconcilerOf(host).runOnce()));
    await settle(sb);
  }
  for (const s of sessions)
    expect({ id: s.requestId, status: sb.getSession(s.requestId)!.status }).toEqual({
      id: s.requestId,
      status: s.outcome,
    });
  return sessions;
}

/** The end user's part: the code, the call, the operator's answer. */
async function finish(sb: VerificationSandbox, s: Played): Promise<void> {
  const code = () => sb.getSession(s.requestId)!.code!;
  if (s.method === 'reverse_flash_call') await sb.call(s.requestId, s.phone);
  else if (s.method === 'operator_id')
    await sb.operator(s.requestId, s.outcome === 'verified' ? 'approve' : 'fail');
  else if (s.outcome === 'verified') await apiCheck(sb, s.requestId, code());
  else {
    const wrong =
      code() === '0'.repeat(code().length) ? '1'.repeat(code().length) : '0'.repeat(code().length);
    while (sb.getSession(s.requestId)!.status !== 'failed') await apiCheck(sb, s.requestId, wrong);
  }
}

/** What the sandbox debited per method, in RUB: the truth `charged` must match. */
function billedBySandbox(sb: VerificationSandbox, sessions: Played[]): Record<string, number> {
  const billed: Record<string, number> = {};
  for (const s of sessions) {
    const view = sb.getSession(s.requestId)!;
    const kopecks = view.charged ? Math.round(Number(view.cost.amount) * 100) : 0;
    billed[s.method] = (billed[s.method] ?? 0) + kopecks;
  }
  return Object.fromEntries(Object.entries(billed).map(([method, kopecks]) => [method, kopecks / 100]));
}

function expectFigures(report: Record<string, MethodFigures | undefined>): void {
  expect(Object.keys(report).sort()).toEqual(Object.keys(EXPECTED).sort());
  for (const [method, expected] of Object.entries(EXPECTED)) {
    expect({ method, ...report[method] }).toMatchObject({ method, ...expected });
    expect({ method, median: report[method]!.medianTimeToVerifyMs }).toEqual({ method, median: 15_000 });
    expect({ method, rate: report[method]!.verifiedRate }).toEqual({
      method,
      rate: expected.verified / expected.started,
    });
  }
}

describe.each(['memory', 'redis'] as const)('methodStats over a played day (%s store)', (storeKind) => {
  // Registered before the suite's hooks: what it closes goes before the sandbox, as before.
  afterAll(async () => {
    if (instance) await instance.shutdown();
    else await host?.close();
  });
  const suite = sandboxSuite();
  let sb: VerificationSandbox;
  let host: TestApp;
  let instance: Instance | undefined;
  let sessions: Played[];

  beforeAll(async () => {
    sb = suite.sb;
    await awayFromMidnight(sb);
    if (storeKind === 'memory') host = await suite.boot(() => startHost('express', sb));
    else {
      instance = await startInstance(sb, 'solo', {
        platform: 'express',
        wiring: 'store-ioredis-url',
        redisUrl: sharedRedisUrl(),
        keyPrefix: uniqueKeyPrefix('method-stats'),
      });
      host = instance;
      await sb.updateAccount(sb.demoAccount.apiKey, { webhookUrl: `${host.url}/verification/webhooks` });
    }
    sessions = await play(sb, { hosts: [host] });
  });

  it('counts started, delivered, each outcome, the median time to verify and the cost per verified user', async () => {
    expectFigures(await host.app.get(VerificationAccountService).methodStats());
  });

  it('charges exactly what the sandbox debited, by the billing rule of each method', async () => {
    const report = await host.app.get(VerificationAccountService).methodStats();
    const charged = Object.fromEntries(Object.entries(report).map(([m, f]) => [m, f!.charged.amount]));
    expect(charged).toEqual(billedBySandbox(sb, sessions));
  });

  it('narrows to a country by calling code or ISO code, and to a window of days', async () => {
    const account = host.app.get(VerificationAccountService);
    const all = await account.methodStats();
    expect(await account.methodStats({ country: 'RU' })).toEqual(all);
    expect(await account.methodStats({ country: '+7', days: 1 })).toEqual(all);
    expect(await account.methodStats({ country: '44' })).toEqual({});
    await expect(account.methodStats({ days: 90 })).rejects.toThrow(RangeError);
  });

  // Last of the suite: it moves the clock 33 days on.
  it('keeps a day 33 days back for the longest window (days: 35), out of the default 30', async () => {
    const account = host.app.get(VerificationAccountService);
    const all = await account.methodStats();
    await sb.advance(33 * DAY);
    expect(await account.methodStats()).toEqual({});
    expect(await account.methodStats({ days: 35 })).toEqual(all);
    expect(await account.methodStats({ country: 'RU', days: 35 })).toEqual(all);
  });
});

describe('two instances on one Redis: each transition counted once', () => {
  // Registered before the suite's hooks: what it closes goes before the sandbox, as before.
  afterAll(async () => {
    for (const instance of instances) await instance.shutdown();
    await fanout?.close();
  });
  const suite = sandboxSuite();
  let sb: VerificationSandbox;
  let instances: Instance[] = [];
  let registries: Registry[] = [];
  let fanout: WebhookFanout;

  beforeAll(async () => {
    sb = suite.sb;
    await awayFromMidnight(sb);
    const keyPrefix = uniqueKeyPrefix('method-stats-pair');
    registries = [new Registry(), new Registry()];
    const common = { platform: 'express' as const, redisUrl: sharedRedisUrl(), keyPrefix };
    instances = [
      await startInstance(sb, 'A', {
        ...common,
        wiring: 'store-ioredis-url',
        module: { metrics: { enabled: true, registry: registries[0] } },
      }),
      await startInstance(sb, 'B', {
        ...common,
        wiring: 'host-node-redis',
        module: { metrics: { enabled: true, registry: registries[1] } },
      }),
    ];
    // Every webhook reaches both instances, at the same time or one after the other.
    const random = seededRandom(0x57a7);
    fanout = await WebhookFanout.start(
      () => instances.map((i) => `${i.url}/verification/webhooks`),
      () => ({ primary: Math.floor(random() * 2), duplicates: random() < 0.5 ? 'concurrent' : 'after' }),
    );
    await sb.updateAccount(sb.demoAccount.apiKey, { webhookUrl: fanout.url });
    await play(sb, { hosts: instances });
  });

  it('both instances read the same figures, each transition counted once', async () => {
    // Each instance adds its counts to the store within a second (STATS_FLUSH_INTERVAL_MS); the
    // figures a read returns are those in the store once both have.
    await Promise.all(instances.map((i) => i.app.get(MethodStats).flush()));
    const [a, b] = await Promise.all(
      instances.map((i) => i.app.get(VerificationAccountService).methodStats()),
    );
    expectFigures(a!);
    expect(b).toEqual(a);
  });

  it("the instances' Prometheus counters add up to the figures: each transition counted by one instance", async () => {
    const sum = async (name: string, labels: Record<string, string>) => {
      let total = 0;
      for (const registry of registries) {
        const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === name);
        for (const value of (metric?.values ?? []) as {
          labels: Record<string, string>;
          value: number;
          metricName?: string;
        }[])
          if (
            (value.metricName === undefined || value.metricName.endsWith('_count')) &&
            Object.entries(labels).every(([k, v]) => value.labels[k] === v)
          )
            total += value.value;
      }
      return total;
    };
    for (const [method, expected] of Object.entries(EXPECTED)) {
      for (const outcome of ['started', 'delivered', 'verified', 'failed', 'expired'] as const)
        expect({
          method,
          outcome,
          count: await sum('verification_method_sessions_total', { method, outcome, country: '7' }),
        }).toEqual({ method, outcome, count: expected[outcome] });
      expect({
        method,
        charged: await sum('verification_method_charged_total', { method, currency: 'RUB' }),
      }).toEqual({
        method,
        charged: expect.closeTo(expected.charged!.amount, 6),
      });
      expect({
        method,
        verified: await sum('verification_method_time_to_verify_seconds', { method }),
      }).toEqual({
        method,
        verified: expected.verified,
      });
    }
  });
});

/**
 * Whose share a start's figures count in (FIGURES_SHARE_PER_DAY: 5 sessions of a method a day an address, 10 a
 * network): an IPv4 address is itself, an IPv6 /64 is one subscriber's address whatever its last 64 bits, and
 * a host's own call without an address is counted by its caller alone.
 */
describe('the address a start counts in (IPv4, IPv6)', () => {
  const suite = sandboxSuite();

  beforeAll(async () => {
    await awayFromMidnight(suite.sb);
  });

  it.each([
    [
      'eight IPv4 addresses of one /24: each its own address, all eight counted',
      (i: number) => `198.51.7.${i + 1}`,
      8,
    ],
    [
      'eight IPv6 addresses of one /64: one address, five counted',
      (i: number) => `2001:db8:7:1::${i + 1}`,
      5,
    ],
  ])('%s', async (_, ipOf, counted) => {
    const host = await suite.boot(() =>
      startAccountHost('express', suite.sb, {
        balance: 1_000,
        trustProxy: true,
        module: { webhooks: undefined },
      }),
    );
    for (let i = 0; i < 8; i++) {
      const res = await call(
        host.url,
        'POST',
        '/verification/start',
        { phone_number: nextPhone(), method: 'sms' },
        // Each start its own owner: a caller's share (3) is not what binds.
        { 'x-user': `share-owner-${i}`, 'x-forwarded-for': ipOf(i) },
      );
      expect(res.status).toBe(201);
    }
    const report = await host.app.get(VerificationAccountService).methodStats();
    expect(report.sms?.started).toBe(counted);
  });
});
