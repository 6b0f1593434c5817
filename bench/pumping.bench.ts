/**
 * Issue 20's scenarios of the protection benchmark (run by `npm run bench -- protection`, after
 * issue 5's): SMS pumping that stays under every per-client and per-phone limit.
 *
 * - attack: the 40 legitimate users of the other scenarios (own address, own owner, each double-
 *   clicks and types the code) plus an attacker spread over 1,000 addresses, 50 owners and 20
 *   ranges of mobile numbers, number-type allowlist widened, no captcha, spend cap 1,000 RUB a day,
 *   the default pumping defence. Goals: ≥ 39 of 40 users verified, the attacker's spend ≤ 10 % of the cap.
 * - normal traffic: 2,000 legitimate users on random mobile numbers (so random ranges), 15 % of whom
 *   never type their code, spend cap raised out of the way. Goal: ≤ 0.5 % of them held.
 *
 * One hour of sandbox clock in 20 ticks of 3 minutes, as the other scenarios; seeded traffic.
 */
import { parsePhoneNumberWithError } from 'libphonenumber-js/max';
import type { FraudSuspectedEvent } from '../src/core/verification-events.js';
import { VerificationSandbox } from '../src/testing/index.js';
import {
  balanceOf,
  post,
  runPool,
  startHost,
  type ProtectionBenchOptions,
  type ProtectionBenchRow,
} from './protection.bench.js';
import { mulberry32 } from './lib/random.js';

const DAY_MS = 86_400_000;
const TICKS = 20;
const TICK_MS = 3 * 60_000;
const CONCURRENCY = 64;
const CAP_RUB = 1000;
const WIDENED_TYPES = ['MOBILE', 'FIXED_LINE_OR_MOBILE', 'PREMIUM_RATE'];
const PUMPING_REASONS = ['range_held', 'owner_held', 'client_held', 'spend_cap_reserve'];

interface Caller {
  ip: string;
  owner: string;
  phone: string;
}

export async function runPumpingScenarios(
  options: ProtectionBenchOptions = {},
): Promise<ProtectionBenchRow[]> {
  const scale = options.quick ? 0.2 : 1;
  return [...(await attackScenario(scale)), ...(await normalTrafficScenario(scale))];
}

export async function attackScenario(scale: number): Promise<ProtectionBenchRow[]> {
  const scenario =
    'pumping: 1,000 addresses, 50 owners, 20 mobile ranges; types widened, no captcha, cap 1,000 RUB';
  const random = mulberry32(20);
  const ranges = Array.from({ length: 20 }, (_, r) => `+7926${String(100 + r * 37).padStart(3, '0')}`);
  const attack: Caller[] = Array.from({ length: 10_000 * scale }, () => ({
    ip: `10.${Math.floor(random() * 4)}.${Math.floor(random() * 250)}.9`,
    owner: `bot-${Math.floor(random() * 50)}`,
    phone: `${ranges[Math.floor(random() * ranges.length)]}${String(Math.floor(random() * 10_000)).padStart(4, '0')}`,
  }));
  for (const range of ranges)
    if (parsePhoneNumberWithError(`${range}0000`).getType() !== 'MOBILE')
      throw new Error(`${range} is not mobile`);
  const users: Caller[] = Array.from({ length: 40 }, (_, i) => ({
    ip: `100.64.${i >> 8}.${i & 255}`,
    owner: `user-${i}`,
    phone: `+7916${String(7_000_000 + i)}`,
  }));
  const run = await runTraffic({ attack, users, abandon: () => false, capRub: CAP_RUB, doubleClick: true });
  const smsPrice = run.smsPrice;
  const attackRub = Math.round(run.attackInitiations * smsPrice * 100) / 100;
  const row = (metric: string, measured: string | number, goal: string, met: boolean | undefined) => ({
    scenario,
    metric,
    measured,
    goal,
    met,
  });
  return [
    row(
      'legitimate users served (verified)',
      `${run.verified}/${users.length}`,
      `≥ 39/${users.length}`,
      run.verified >= 39,
    ),
    row(
      'attacker spend, RUB (initiations × sms price)',
      `${attackRub} (${run.attackInitiations} initiations)`,
      `≤ ${CAP_RUB / 10} (10 % of the cap)`,
      attackRub <= CAP_RUB / 10,
    ),
    row('RUB charged by the sandbox (all)', run.charged, `≤ ${CAP_RUB}`, run.charged <= CAP_RUB),
    row(
      'verification.fraud_suspected events (by reason)',
      summary(run.events.map((e) => e.reason)),
      '',
      undefined,
    ),
    row('attack attempts answered (status reason: count)', summary(run.attackAnswers), '', undefined),
  ];
}

async function normalTrafficScenario(scale: number): Promise<ProtectionBenchRow[]> {
  const count = Math.round(2000 * scale);
  const scenario = `pumping: ${count} legitimate users on random ranges, 15 % never type the code (cap out of the way)`;
  const random = mulberry32(2000);
  const users: Caller[] = [];
  while (users.length < count) {
    const phone = `+79${String(Math.floor(random() * 1e9)).padStart(9, '0')}`;
    if (parsePhoneNumberWithError(phone).getType() !== 'MOBILE') continue;
    const i = users.length;
    users.push({ ip: `100.${64 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`, owner: `user-${i}`, phone });
  }
  const abandoning = new Set(users.filter(() => random() < 0.15).map((u) => u.phone));
  const run = await runTraffic({
    attack: [],
    users,
    abandon: (u) => abandoning.has(u.phone),
    capRub: 100_000,
    doubleClick: false,
  });
  const held = run.userAnswers.filter((a) => PUMPING_REASONS.some((r) => a.includes(`(${r})`))).length;
  const share = Math.round((held / count) * 10_000) / 100;
  return [
    {
      scenario,
      metric: 'legitimate users held by the pumping defence',
      measured: `${held}/${count} (${share} %)`,
      goal: '≤ 0.5 %',
      met: held / count <= 0.005,
    },
    {
      scenario,
      metric: 'users verified (of those who typed the code)',
      measured: `${run.verified}/${count - abandoning.size}`,
      goal: '',
      met: undefined,
    },
    {
      scenario,
      metric: 'verification.fraud_suspected events',
      measured: run.events.length,
      goal: '',
      met: undefined,
    },
  ];
}

interface TrafficRun {
  verified: number;
  attackInitiations: number;
  charged: number;
  smsPrice: number;
  events: FraudSuspectedEvent[];
  attackAnswers: string[];
  userAnswers: string[];
}

async function runTraffic(input: {
  attack: Caller[];
  users: Caller[];
  abandon: (user: Caller) => boolean;
  capRub: number;
  doubleClick: boolean;
}): Promise<TrafficRun> {
  const sb = await VerificationSandbox.start({
    port: 0,
    demoAccount: { balance: 1_000_000, autoDeliver: true },
  });
  const events: FraudSuspectedEvent[] = [];
  const host = await startHost(
    {
      api: { baseUrl: sb.url, apiKey: sb.demoAccount.apiKey, apiSecret: sb.demoAccount.apiSecret },
      clock: () => sb.now(),
      reconcile: { enabled: false },
      phone: { allowedTypes: WIDENED_TYPES },
      owner: (req: { headers: Record<string, unknown> }) => header(req, 'x-user'),
      limits: { spendCap: { amount: input.capRub, windowMs: DAY_MS } },
    },
    (name, payload) => {
      if (name === 'verification.fraud_suspected') events.push(payload as FraudSuspectedEvent);
    },
  );
  await sb.advance(DAY_MS - (sb.now() % DAY_MS) + 60_000);
  const balanceBefore = balanceOf(sb);
  const attackAnswers: string[] = [];
  const userAnswers: string[] = [];
  const verified = new Set<string>();
  try {
    const perTickAttack = Math.ceil(input.attack.length / TICKS);
    const perTickUsers = Math.ceil(input.users.length / TICKS);
    for (let tick = 0; tick < TICKS; tick++) {
      const attack = input.attack.slice(tick * perTickAttack, (tick + 1) * perTickAttack);
      const users = input.users.slice(tick * perTickUsers, (tick + 1) * perTickUsers);
      const handles = new Map<string, string>();
      const tasks: (() => Promise<void>)[] = attack.map((a) => async () => {
        attackAnswers.push(answerOf(await start(host.url, a)));
      });
      users.forEach((user, i) => {
        tasks.splice(Math.floor((i + 0.5) * (Math.max(tasks.length, 1) / users.length)), 0, async () => {
          const clicks = await Promise.all(
            Array.from({ length: input.doubleClick ? 2 : 1 }, () => start(host.url, user)),
          );
          userAnswers.push(answerOf(clicks[0]!));
          const ok = clicks.find((c) => c.status === 201);
          if (ok) handles.set(user.phone, String(ok.body.verification_id));
        });
      });
      await runPool(tasks, CONCURRENCY);
      await sb.advance(2000);
      await runPool(
        users
          .filter((u) => handles.has(u.phone) && !input.abandon(u))
          .map((user) => async () => {
            const session = sb.sessionsFor(user.phone).at(-1);
            if (!session?.code) return;
            const res = await post(
              host.url,
              '/verification/check',
              user.ip,
              { 'x-user': user.owner },
              { verification_id: handles.get(user.phone), code: session.code },
            );
            if (res.body.verified === true) verified.add(user.phone);
          }),
        CONCURRENCY,
      );
      await sb.advance(TICK_MS - 2000);
    }
    await sb.advance(5000);
    const attackPhones = new Set(input.attack.map((a) => a.phone));
    let attackInitiations = 0;
    for (const phone of attackPhones) attackInitiations += sb.sessionsFor(phone).length;
    return {
      verified: verified.size,
      attackInitiations,
      charged: Math.round((balanceBefore - balanceOf(sb)) * 100) / 100,
      smsPrice: Number(sb.getAccount(sb.demoAccount.apiKey)!.prices.sms.amount),
      events,
      attackAnswers,
      userAnswers,
    };
  } finally {
    await host.close();
    await sb.close();
  }
}

function start(url: string, caller: Caller) {
  return post(
    url,
    '/verification/start',
    caller.ip,
    { 'x-user': caller.owner },
    {
      phone_number: caller.phone,
      method: 'sms',
    },
  );
}

function answerOf(res: { status: number; body: Record<string, unknown> }): string {
  const reason = res.body.reason === undefined ? '' : ` (${String(res.body.reason)})`;
  return `${res.status} ${String(res.body.error_code ?? 'started')}${reason}`;
}

function summary(values: string[]): string {
  const counts = new Map<string, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  return (
    [...counts]
      .sort((a, b) => b[1] - a[1])
      .map(([v, n]) => `${v}: ${n}`)
      .join(', ') || 'none'
  );
}

function header(req: { headers: Record<string, unknown> }, name: string): string | undefined {
  const value = req.headers[name];
  return typeof value === 'string' ? value : undefined;
}
