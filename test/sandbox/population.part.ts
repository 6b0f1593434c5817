import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { parseCliArgs } from '../../src/testing/cli-args.js';
import { parsePopulation } from '../../src/testing/sandbox-population.js';
import { SandboxUsers } from '../../src/testing/sandbox-users.js';
import {
  SANDBOX_POPULATION_REALISTIC,
  SandboxControlClient,
  SandboxControlError,
  VerificationSandbox,
  type SandboxMethod,
  type SandboxPopulation,
  type SandboxUserPlanView,
} from '../../src/testing/index.js';
import { api, control, initiate, type Creds, type Json } from './sandbox-client.js';
import { WebhookReceiver } from './webhook-receiver.js';

/** A distinct E.164 number per index (+7 999 and 7 digits). */
const phoneOf = (i: number): string => `+7999${String(i).padStart(7, '0')}`;

/** Starts `count` sessions of `method` for numbers `from`..`from + count - 1`, 50 at a time; request ids in order. */
async function startMany(
  sb: VerificationSandbox,
  creds: Creds,
  method: string,
  from: number,
  count: number,
): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i += 50) {
    const batch = Array.from({ length: Math.min(50, count - i) }, (_, j) =>
      initiate(sb, phoneOf(from + i + j), method, creds).then((s: Json) => s.request_id as string),
    );
    ids.push(...(await Promise.all(batch)));
  }
  return ids;
}

const plan = (sb: VerificationSandbox, id: string): SandboxUserPlanView => {
  const p = sb.userPlan(id);
  if (!p) throw new Error(`no user plan for ${id}`);
  return p;
};
const share = (values: boolean[]): number => values.filter(Boolean).length / values.length;
const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
};

describe('sandbox population', () => {
  let sb: VerificationSandbox;
  let client: SandboxControlClient;
  let receiver: WebhookReceiver;
  let accountCounter = 0;

  beforeAll(async () => {
    // A frozen clock: the sandbox clock moves only by advance, so times are exact.
    sb = await VerificationSandbox.start({ port: 0, freezeClock: true });
    client = new SandboxControlClient(sb.url);
    receiver = await WebhookReceiver.start();
  });
  afterAll(async () => {
    await sb.close();
    await receiver.close();
  });

  /** A fresh account with `population`. */
  async function account(population: SandboxPopulation | null, extra: object = {}): Promise<Creds> {
    accountCounter += 1;
    const apiKey = `pop_${accountCounter}`;
    return sb.createAccount({ apiKey, population, balance: 100_000, ...extra });
  }
  const withWebhooks = (): object => ({ webhookUrl: receiver.url });

  /** Event types the receiver got for one session (the shared clock expires other tests' sessions too). */
  async function eventTypes(requestId: string): Promise<string[]> {
    await sb.webhooksIdle();
    return receiver
      .events()
      .filter((e) => e.data.request_id === requestId)
      .map((e) => e.type);
  }

  describe('default off', () => {
    it('an account without a population keeps the old behaviour: nothing happens by itself, no user plan', async () => {
      const creds = await account(null);
      const s = await initiate(sb, phoneOf(1), 'sms', creds);
      const r = await initiate(sb, phoneOf(1), 'reverse_flash_call', creds);
      await sb.advance(250_000);
      expect(sb.getSession(s.request_id)!.status).toBe('sent');
      expect(sb.getSession(r.request_id)!.status).toBe('sent');
      expect(sb.userPlan(s.request_id)).toBeUndefined();
      const res = await control(sb, 'GET', `/sessions/${s.request_id}/user`);
      expect(res.status).toBe(409);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
      expect(res.body).toMatchObject({ status: 409, error_code: 'not_applicable' });
      expect(sb.getAccount(creds.apiKey)!.population).toBeNull();
    });

    it('a method the population does not cover behaves as before (auto-delivery included)', async () => {
      const creds = await account({ methods: { flash_call: { deliveryRate: 0 } } }, { autoDeliver: true });
      const s = await initiate(sb, phoneOf(2), 'sms', creds);
      expect(sb.userPlan(s.request_id)).toBeUndefined();
      await sb.advance(1000); // autoDeliverDelayMs
      expect(sb.getSession(s.request_id)!.status).toBe('delivered');
      // The covered method: the population replaces auto-delivery.
      const f = await initiate(sb, phoneOf(2), 'flash_call', creds);
      await sb.advance(250_000);
      expect(sb.getSession(f.request_id)!.status).toBe('sent');
    });
  });

  describe('delivery', () => {
    it('respects the delivery rate over 600 seeded users; delivered ones reach delivered at their time, charged', async () => {
      const creds = await account({
        seed: 'delivery',
        methods: { sms: { deliveryRate: 0.7, deliveryTime: { medianMs: 2000, p90Ms: 6000 } } },
      });
      const ids = await startMany(sb, creds, 'sms', 1000, 600);
      const plans = ids.map((id) => plan(sb, id));
      expect(share(plans.map((p) => p.delivered === true))).toBeGreaterThan(0.65);
      expect(share(plans.map((p) => p.delivered === true))).toBeLessThan(0.75);
      const times = plans.filter((p) => p.delivered).map((p) => p.delivered_after_ms!);
      expect(median(times)).toBeGreaterThan(1700);
      expect(median(times)).toBeLessThan(2300);
      // About 90 % deliver within p90.
      expect(share(times.map((t) => t <= 6000))).toBeGreaterThan(0.85);
      expect(share(times.map((t) => t <= 6000))).toBeLessThan(0.95);

      // Exactly at each user's delivery time, and not a millisecond before.
      const first = plans.find((p) => p.delivered && p.delivered_after_ms! > 1)!;
      await sb.advance(first.delivered_after_ms! - 1);
      expect(sb.getSession(first.request_id)!.status).toBe('sent');
      await sb.advance(1);
      expect(sb.getSession(first.request_id)).toMatchObject({ status: 'delivered', charged: true });

      await sb.advance(200_000);
      for (const p of plans) {
        const session = sb.getSession(p.request_id)!;
        expect(session.status).toBe(p.delivered ? 'delivered' : 'sent');
        expect(session.charged).toBe(p.delivered);
      }
    });

    it('an undelivered session never reaches delivered: it stays sent, expires, and is not charged', async () => {
      const creds = await account({ methods: { flash_call: { deliveryRate: 0 } } }, withWebhooks());
      const s = await initiate(sb, phoneOf(3), 'flash_call', creds);
      expect(plan(sb, s.request_id)).toMatchObject({
        delivered: false,
        delivered_after_ms: null,
        completes: false,
      });
      await sb.advance(299_999);
      expect((await api(sb, 'GET', `/v1/verify/${s.request_id}`, { creds })).body.status).toBe('sent');
      await sb.advance(1);
      expect(sb.getSession(s.request_id)).toMatchObject({
        status: 'expired',
        charged: false,
        incoming_number: null,
      });
      expect(await eventTypes(s.request_id)).toEqual(['verification.expired']);
    });

    it("undelivered: 'fail' fails the session when the channel gives up, uncharged", async () => {
      const creds = await account(
        { methods: { sms: { deliveryRate: 0, deliveryTime: { medianMs: 8000 }, undelivered: 'fail' } } },
        withWebhooks(),
      );
      const s = await initiate(sb, phoneOf(4), 'sms', creds);
      expect(plan(sb, s.request_id)).toMatchObject({ delivered: false, delivered_after_ms: 8000 });
      await sb.advance(7999);
      expect(sb.getSession(s.request_id)!.status).toBe('sent');
      await sb.advance(1);
      expect(sb.getSession(s.request_id)).toMatchObject({ status: 'failed', charged: false });
      expect(await eventTypes(s.request_id)).toEqual(['verification.failed']);
    });
  });

  describe('completion by users who act towards the API', () => {
    it('reverse_flash_call: the sandbox places the call at the user’s time; webhook and polling see verified', async () => {
      const creds = await account(
        { methods: { reverse_flash_call: { completionTime: { medianMs: 12_000 } } } },
        withWebhooks(),
      );
      const s = await initiate(sb, phoneOf(5), 'reverse_flash_call', creds);
      expect(plan(sb, s.request_id)).toMatchObject({
        delivered: null,
        completes: true,
        completes_after_ms: 12_000,
        completed_by: 'sandbox',
        code: null,
      });
      await sb.advance(11_999);
      expect((await api(sb, 'GET', `/v1/verify/${s.request_id}`, { creds })).body.status).toBe('sent');
      await sb.advance(1);
      const polled = (await api(sb, 'GET', `/v1/verify/${s.request_id}`, { creds })).body;
      expect(polled).toMatchObject({ status: 'verified', verified_at: expect.any(String) });
      expect(sb.getSession(s.request_id)!.charged).toBe(true);
      expect(await eventTypes(s.request_id)).toEqual(['verification.verified']);
    });

    it('reverse_flash_call: a user who does not call leaves it to expire, uncharged', async () => {
      const creds = await account({ methods: { reverse_flash_call: { completionRate: 0 } } });
      const s = await initiate(sb, phoneOf(6), 'reverse_flash_call', creds);
      expect(plan(sb, s.request_id)).toMatchObject({ completes: false, completes_after_ms: null });
      await sb.advance(300_000);
      expect(sb.getSession(s.request_id)).toMatchObject({ status: 'expired', charged: false });
    });

    it('reverse_flash_call: completion depends on the device; a declared device wins over the draw', async () => {
      const creds = await account({
        desktopShare: 0, // every drawn user is mobile
        methods: { reverse_flash_call: { completionRate: 1, desktop: { completionRate: 0 } } },
      });
      await client.setDevice(phoneOf(8), 'desktop');
      const mobile = await initiate(sb, phoneOf(7), 'reverse_flash_call', creds);
      const desktop = await initiate(sb, phoneOf(8), 'reverse_flash_call', creds);
      expect(plan(sb, mobile.request_id)).toMatchObject({ device: 'mobile', completes: true });
      expect(plan(sb, desktop.request_id)).toMatchObject({ device: 'desktop', completes: false });
      // Forgetting the declaration: the next session's user is drawn again.
      expect(await client.setDevice(phoneOf(8), null)).toEqual({ phoneNumber: phoneOf(8), device: null });
      const again = await initiate(sb, phoneOf(8), 'reverse_flash_call', creds);
      expect(plan(sb, again.request_id)).toMatchObject({ device: 'mobile', completes: true });
      await sb.advance(10_000);
      expect(sb.getSession(mobile.request_id)!.status).toBe('verified');
      expect(sb.getSession(again.request_id)!.status).toBe('verified');
      expect(sb.getSession(desktop.request_id)!.status).toBe('sent');
    });

    it('operator_id: a delivered push is approved at delivery + the user’s time', async () => {
      const creds = await account({
        methods: {
          operator_id: { deliveryTime: { medianMs: 3000 }, completionTime: { medianMs: 7000 } },
        },
      });
      const s = await initiate(sb, phoneOf(9), 'operator_id', creds);
      expect(plan(sb, s.request_id)).toMatchObject({
        delivered: true,
        delivered_after_ms: 3000,
        completes: true,
        completes_after_ms: 10_000,
        completed_by: 'sandbox',
        code: null,
      });
      await sb.advance(9999);
      expect(sb.getSession(s.request_id)).toMatchObject({ status: 'sent', operator_state: 'push_pending' });
      await sb.advance(1);
      expect(sb.getSession(s.request_id)).toMatchObject({ status: 'verified', operator_state: 'approved' });
    });

    it('operator_id: an undelivered push falls back to an SMS code that the driver types', async () => {
      const creds = await account(
        {
          methods: {
            operator_id: {
              deliveryRate: 0,
              deliveryTime: { medianMs: 4000 },
              completionTime: { medianMs: 6000 },
            },
          },
        },
        withWebhooks(),
      );
      const s = await initiate(sb, phoneOf(10), 'operator_id', creds);
      expect(plan(sb, s.request_id)).toMatchObject({
        delivered: false,
        delivered_after_ms: 4000,
        completes: true,
        completes_after_ms: 10_000,
        completed_by: 'driver',
        code: null,
      });
      await sb.advance(4000);
      const fallback = plan(sb, s.request_id);
      expect(sb.getSession(s.request_id)).toMatchObject({
        operator_state: 'sms_fallback',
        awaiting_code: true,
      });
      expect(fallback.code).toMatch(/^\d{6}$/);
      expect(await eventTypes(s.request_id)).toEqual(['verification.code_required']);
      // The sandbox does not type codes: nothing more happens by itself.
      await sb.advance(10_000);
      expect(sb.getSession(s.request_id)!.operator_state).toBe('sms_fallback');
      const checked = await api(sb, 'POST', '/v1/verify/check', {
        creds,
        body: { request_id: s.request_id, code: fallback.code },
      });
      expect(checked.status).toBe(200);
      await sb.advance(500); // operatorResultDelayMs
      expect(sb.getSession(s.request_id)!.status).toBe('verified');
    });

    it('msgr2_bot: the user shares the number at the delivery time (charged then); the code is the driver’s to type', async () => {
      const creds = await account({
        methods: { msgr2_bot: { deliveryTime: { medianMs: 20_000 }, completionTime: { medianMs: 5000 } } },
      });
      const s = await initiate(sb, phoneOf(11), 'msgr2_bot', creds);
      expect(plan(sb, s.request_id)).toMatchObject({
        delivered: true,
        completes: true,
        completes_after_ms: 25_000,
        completed_by: 'driver',
        code: null,
      });
      await sb.advance(19_999);
      expect(sb.getSession(s.request_id)).toMatchObject({ status: 'sent', charged: false, code: null });
      await sb.advance(1);
      expect(sb.getSession(s.request_id)).toMatchObject({
        status: 'delivered',
        charged: true,
        awaiting_code: true,
        shared_phone_number: phoneOf(11),
      });
      const code = plan(sb, s.request_id).code!;
      expect(code).toBe(sb.getSession(s.request_id)!.code);
      await sb.advance(60_000);
      expect(sb.getSession(s.request_id)!.status).toBe('delivered');
      const checked = await api(sb, 'POST', '/v1/verify/check', {
        creds,
        body: { request_id: s.request_id, code },
      });
      expect(checked.body.status).toBe('verified');
    });
  });

  describe('the user plan of code methods', () => {
    it('GET /_sandbox/sessions/:id/user: the plan, the code once delivered; a driver acts it out', async () => {
      const creds = await account({
        methods: { sms: { deliveryTime: { medianMs: 3000 }, completionTime: { medianMs: 9000 } } },
      });
      const s = await initiate(sb, phoneOf(12), 'sms', creds);
      const before = await control(sb, 'GET', `/sessions/${s.request_id}/user`);
      expect(before.status).toBe(200);
      expect(before.body).toEqual({
        request_id: s.request_id,
        phone_number: phoneOf(12),
        method: 'sms',
        device: 'mobile',
        attempt: 1,
        delivered: true,
        delivered_after_ms: 3000,
        completes: true,
        completes_after_ms: 12_000,
        completed_by: 'driver',
        code: null, // not in the user's hands yet
      });
      await sb.advance(12_000);
      const after = await client.userPlan(s.request_id.toUpperCase());
      expect(after).toMatchObject({
        requestId: s.request_id,
        completesAfterMs: 12_000,
        completedBy: 'driver',
      });
      expect(after.code).toBe(sb.getSession(s.request_id)!.code);
      // The sandbox never types the code itself.
      expect(sb.getSession(s.request_id)!.status).toBe('delivered');
      const checked = await api(sb, 'POST', '/v1/verify/check', {
        creds,
        body: { request_id: s.request_id, code: after.code },
      });
      expect(checked.body.status).toBe('verified');
      // The plan stays readable once the session is over.
      expect((await client.userPlan(s.request_id)).completes).toBe(true);
    });

    it('unknown session 404; session without a simulated user 409 not_applicable', async () => {
      const unknown = await control(sb, 'GET', '/sessions/6f1c1d9e-8b7a-4c2e-9d0f-1a2b3c4d5e6f/user');
      expect(unknown.status).toBe(404);
      expect(unknown.body.error_code).toBe('not_found');
      const s = await initiate(sb, phoneOf(13), 'sms'); // the demo account: no population
      const err = await client.userPlan(s.request_id).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SandboxControlError);
      expect(err).toMatchObject({ status: 409, errorCode: 'not_applicable' });
    });

    it('a user slower than the TTL finds the session expired', async () => {
      const creds = await account({
        methods: { reverse_flash_call: { completionTime: { medianMs: 40_000 } } },
      });
      const s = await initiate(sb, phoneOf(14), 'reverse_flash_call', creds, { expiry_seconds: 30 });
      expect(plan(sb, s.request_id)).toMatchObject({ completes: true, completes_after_ms: 40_000 });
      await sb.advance(60_000);
      expect(sb.getSession(s.request_id)!.status).toBe('expired');
    });
  });

  describe('determinism', () => {
    const population: SandboxPopulation = {
      seed: 42,
      desktopShare: 0.5,
      methods: {
        sms: { deliveryRate: 0.5, completionRate: 0.5, completionTime: { medianMs: 10_000, p90Ms: 40_000 } },
        reverse_flash_call: { completionRate: 0.6, desktop: { completionRate: 0.3 } },
      },
    };
    const decisions = (p: SandboxUserPlanView) => [
      p.phone_number,
      p.method,
      p.device,
      p.delivered,
      p.delivered_after_ms,
      p.completes,
      p.completes_after_ms,
    ];

    async function plansOf(seed: string | number): Promise<unknown[][]> {
      const other = await VerificationSandbox.start({ port: 0, freezeClock: true });
      try {
        const creds = await other.createAccount({ population: { ...population, seed } });
        const ids = [
          ...(await startMany(other, creds, 'sms', 2000, 60)),
          ...(await startMany(other, creds, 'reverse_flash_call', 2000, 60)),
        ];
        return ids.map((id) => decisions(plan(other, id)));
      } finally {
        await other.close();
      }
    }

    it('the same seed gives the same users in another sandbox; another seed gives others', async () => {
      const first = await plansOf(42);
      expect(await plansOf(42)).toEqual(first);
      const other = await plansOf('another seed');
      const differing = first.filter((d, i) => JSON.stringify(d) !== JSON.stringify(other[i]));
      expect(differing.length).toBeGreaterThan(30);
    });

    it('a second session of the same number and method is a new attempt, drawn afresh', async () => {
      // Every user completes, at a spread-out time: two attempts agree only by a fluke.
      const creds = await account({
        seed: 7,
        desktopShare: 0.5,
        methods: { sms: { completionTime: { medianMs: 10_000, p90Ms: 40_000 } } },
      });
      const firsts = await startMany(sb, creds, 'sms', 3000, 40);
      const seconds = await startMany(sb, creds, 'sms', 3000, 40);
      expect(seconds.map((id) => plan(sb, id).attempt)).toEqual(Array(40).fill(2));
      const same = firsts.filter(
        (id, i) =>
          JSON.stringify(decisions(plan(sb, id))) === JSON.stringify(decisions(plan(sb, seconds[i]!))),
      );
      expect(same.length).toBeLessThan(3);
      // The device belongs to the number, not to the attempt.
      expect(seconds.map((id) => plan(sb, id).device)).toEqual(firsts.map((id) => plan(sb, id).device));
    });
  });

  describe('runtime knobs through the control client', () => {
    it('setPopulation changes what new sessions do; sessions already started keep their users; null turns it off', async () => {
      const created = await client.createAccount({
        apiKey: 'pop_runtime',
        population: { methods: { msgr1: { deliveryRate: 0 } } },
      });
      expect(created.population).toEqual({ methods: { msgr1_otp: { deliveryRate: 0 } } });
      const creds = { apiKey: created.apiKey, apiSecret: created.apiSecret };
      const before = await initiate(sb, phoneOf(20), 'msgr1', creds);

      const knobs: SandboxPopulation = {
        seed: 'runtime',
        desktopShare: 0.25,
        methods: {
          msgr1_otp: { deliveryRate: 1, deliveryTime: { medianMs: 1500, p90Ms: 1500 } },
          reverse_flash_call: { completionRate: 0.7, desktop: { completionRate: 0.4 } },
        },
      };
      const updated = await client.setPopulation(created.apiKey, knobs);
      expect(updated.population).toEqual(knobs);
      expect(await client.getAccount(created.apiKey)).toEqual(updated);
      // On the wire, snake_case all the way down, method names unchanged.
      const wire = await control(sb, 'GET', `/accounts/${created.apiKey}`);
      expect(wire.body.population).toEqual({
        seed: 'runtime',
        desktop_share: 0.25,
        methods: {
          msgr1_otp: { delivery_rate: 1, delivery_time: { median_ms: 1500, p90_ms: 1500 } },
          reverse_flash_call: { completion_rate: 0.7, desktop: { completion_rate: 0.4 } },
        },
      });

      const after = await initiate(sb, phoneOf(20), 'msgr1', creds);
      await client.advance(1500);
      expect((await client.getSession(before.request_id)).status).toBe('sent');
      expect((await client.getSession(after.request_id)).status).toBe('delivered');
      expect((await client.userPlan(before.request_id)).delivered).toBe(false);

      const off = await client.setPopulation(created.apiKey, null);
      expect(off.population).toBeNull();
      const none = await initiate(sb, phoneOf(20), 'msgr1', creds);
      expect(await client.userPlan(none.request_id).catch((e: SandboxControlError) => e.status)).toBe(409);
    });

    it('PATCH /_sandbox/accounts/:key takes population in snake_case', async () => {
      const creds = await account(null);
      const res = await control(sb, 'PATCH', `/accounts/${creds.apiKey}`, {
        population: {
          methods: { sms: { delivery_rate: 0, undelivered: 'fail', delivery_time: { median_ms: 100 } } },
        },
      });
      expect(res.status).toBe(200);
      const s = await initiate(sb, phoneOf(21), 'sms', creds);
      await sb.advance(100);
      expect(sb.getSession(s.request_id)!.status).toBe('failed');
    });

    it('PUT /_sandbox/users/:phone declares a device; the answer is the normalised number', async () => {
      const res = await control(sb, 'PUT', `/users/${encodeURIComponent('+7 999 000-00-22')}`, {
        device: 'desktop',
      });
      expect(res).toMatchObject({ status: 200, body: { phone_number: phoneOf(22), device: 'desktop' } });
      const creds = await account({ methods: { sms: {} } });
      const s = await initiate(sb, phoneOf(22), 'sms', creds);
      expect(plan(sb, s.request_id).device).toBe('desktop');
    });
  });

  describe('validation', () => {
    const bad: [string, unknown][] = [
      ['a rate above 1', { methods: { sms: { delivery_rate: 1.5 } } }],
      ['a negative rate', { methods: { sms: { completion_rate: -0.1 } } }],
      ['a rate that is not a number', { methods: { sms: { completion_rate: '0.5' } } }],
      ['an unknown method', { methods: { voice: {} } }],
      ['a method given twice', { methods: { msgr1: {}, msgr1_otp: {} } }],
      ['an unknown knob', { methods: { sms: { delivery_probability: 0.5 } } }],
      ['an unknown top-level field', { desktop: 0.5 }],
      ['delivery on reverse_flash_call', { methods: { reverse_flash_call: { delivery_rate: 0.5 } } }],
      ['undelivered on msgr2_bot', { methods: { msgr2_bot: { undelivered: 'fail' } } }],
      ['an unknown undelivered outcome', { methods: { sms: { undelivered: 'retry' } } }],
      ['p90 below the median', { methods: { sms: { delivery_time: { median_ms: 5000, p90_ms: 1000 } } } }],
      [
        'a spread around a zero median',
        { methods: { sms: { delivery_time: { median_ms: 0, p90_ms: 10 } } } },
      ],
      ['a fractional time', { methods: { sms: { completion_time: { median_ms: 1.5 } } } }],
      ['a negative time', { methods: { sms: { completion_time: { median_ms: -1 } } } }],
      ['a time without a median', { methods: { sms: { completion_time: { p90_ms: 10 } } } }],
      ['a device override inside a device override', { methods: { sms: { mobile: { desktop: {} } } } }],
      ['a desktop share above 1', { desktop_share: 2 }],
      ['an empty seed', { seed: '' }],
      ['a seed that is an object', { seed: { a: 1 } }],
      ['methods as a list', { methods: ['sms'] }],
      ['a population that is a string', 'realistic'],
    ];

    it.each(bad)('%s: 400 validation_error problem, and nothing changes', async (_name, population) => {
      const creds = await account({ methods: { sms: { deliveryRate: 0.5 } } });
      const before = sb.getAccount(creds.apiKey)!.population;
      const res = await control(sb, 'PATCH', `/accounts/${creds.apiKey}`, { population, balance: 1 });
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
      expect(res.body).toMatchObject({
        status: 400,
        error_code: 'validation_error',
        detail: expect.any(String),
      });
      expect(res.body.detail).toMatch(/population|seed|desktop_share/);
      expect(sb.getAccount(creds.apiKey)!.population).toEqual(before);
      expect(sb.getAccount(creds.apiKey)!.balance.amount).toBe(100_000);
    });

    it('POST /_sandbox/accounts with a bad population creates nothing', async () => {
      const res = await control(sb, 'POST', '/accounts', {
        api_key: 'pop_never',
        population: { methods: { sms: { delivery_rate: 7 } } },
      });
      expect(res.status).toBe(400);
      expect((await control(sb, 'GET', '/accounts/pop_never')).status).toBe(404);
    });

    it('the client surfaces a bad knob as SandboxControlError 400', async () => {
      const err = await client
        .setPopulation(sb.demoAccount.apiKey, { methods: { sms: { deliveryRate: 2 } } })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SandboxControlError);
      expect(err).toMatchObject({ status: 400, errorCode: 'validation_error' });
      expect((err as SandboxControlError).detail).toContain('population.methods.sms.delivery_rate');
    });

    it.each([
      ['a number that is not E.164', '/users/12345', { device: 'mobile' }],
      ['an unknown device', `/users/${encodeURIComponent(phoneOf(30))}`, { device: 'tablet' }],
      ['no body', `/users/${encodeURIComponent(phoneOf(30))}`, undefined],
    ])('PUT /_sandbox/users with %s: 400 validation_error', async (_name, path, body) => {
      const res = await control(sb, 'PUT', path, body);
      expect(res.status).toBe(400);
      expect(res.body.error_code).toBe('validation_error');
    });

    it('a bad population option refuses to start the sandbox', async () => {
      await expect(
        VerificationSandbox.start({ population: { methods: { sms: { deliveryRate: -1 } } } }),
      ).rejects.toThrow(RangeError);
    });
  });

  describe('the sandbox option and the realistic preset', () => {
    it('the population option applies to the demo account and to new accounts; null opts one out', async () => {
      const other = await VerificationSandbox.start({
        port: 0,
        freezeClock: true,
        population: { methods: { reverse_flash_call: { completionTime: { medianMs: 5000 } } } },
      });
      try {
        const demo = await initiate(other, phoneOf(40), 'reverse_flash_call');
        const creds = await other.createAccount({});
        const created = await initiate(other, phoneOf(41), 'reverse_flash_call', creds);
        const optedOut = await other.createAccount({ population: null });
        const manual = await initiate(other, phoneOf(42), 'reverse_flash_call', optedOut);
        await other.advance(5000);
        expect(other.getSession(demo.request_id)!.status).toBe('verified');
        expect(other.getSession(created.request_id)!.status).toBe('verified');
        expect(other.getSession(manual.request_id)!.status).toBe('sent');
      } finally {
        await other.close();
      }
    });

    it('SANDBOX_POPULATION_REALISTIC gives the mix docs/sandbox-population.md tabulates (1,000 numbers)', () => {
      const population = parsePopulation(SANDBOX_POPULATION_REALISTIC);
      const users = new SandboxUsers();
      const pct = (part: number, whole: number): number => Math.round((part / whole) * 1000) / 10;
      const mix = (method: SandboxMethod) => {
        const drawn = Array.from({ length: 1000 }, (_, i) => users.draw(population, phoneOf(i), method, 1)!);
        const completing = drawn.filter((u) => u.completes);
        return {
          delivered: pct(drawn.filter((u) => u.delivered).length, drawn.length),
          completes: pct(completing.length, drawn.length),
          medianS: Math.round(median(completing.map((u) => u.completesAfterMs!)) / 1000),
          desktop: drawn.filter((u) => u.device === 'desktop').length,
          desktopCompletes: pct(
            completing.filter((u) => u.device === 'desktop').length,
            drawn.filter((u) => u.device === 'desktop').length,
          ),
          mobileCompletes: pct(
            completing.filter((u) => u.device === 'mobile').length,
            drawn.filter((u) => u.device === 'mobile').length,
          ),
        };
      };
      expect(mix('sms')).toMatchObject({ delivered: 98.4, completes: 86.1, medianS: 27, desktop: 288 });
      expect(mix('reverse_flash_call')).toMatchObject({
        completes: 59.4,
        mobileCompletes: 66.7,
        desktopCompletes: 41.3,
        medianS: 18,
      });
      expect(mix('flash_call')).toMatchObject({ delivered: 85.9, completes: 71.2, medianS: 20 });
      expect(mix('msgr1_otp')).toMatchObject({ delivered: 90.4, completes: 81.5, medianS: 17 });
      expect(mix('msgr2_bot')).toMatchObject({
        delivered: 52,
        completes: 46.2,
        mobileCompletes: 52.9,
        desktopCompletes: 29.5,
        medianS: 42,
      });
      expect(mix('operator_id')).toMatchObject({ delivered: 88.3, completes: 74, medianS: 19 });
    });

    it('a sandbox started with the preset gives its sessions exactly those users', async () => {
      const other = await VerificationSandbox.start({
        port: 0,
        freezeClock: true,
        population: SANDBOX_POPULATION_REALISTIC,
      });
      try {
        const population = parsePopulation(SANDBOX_POPULATION_REALISTIC);
        const users = new SandboxUsers();
        for (const method of ['sms', 'reverse_flash_call', 'msgr2_bot'] as const) {
          const ids = await startMany(other, other.demoAccount, method, 0, 100);
          const plans = ids.map((id) => plan(other, id));
          expect(plans.map((p) => [p.device, p.delivered, p.completes, p.completes_after_ms])).toEqual(
            plans.map((p) => {
              const u = users.draw(population, p.phone_number, method, 1)!;
              return [u.device, u.delivered, u.completes, u.completesAfterMs];
            }),
          );
        }
      } finally {
        await other.close();
      }
    });

    it('the preset is frozen all the way down', () => {
      expect(Object.isFrozen(SANDBOX_POPULATION_REALISTIC.methods!.sms!.deliveryTime)).toBe(true);
    });

    it('the CLI takes --population realistic and a seed, from flags or the environment', () => {
      const flagged = parseCliArgs(['--population', 'realistic', '--population-seed', 'bench-7'], {});
      if (flagged.help) throw new Error('unexpected help');
      expect(flagged.options.population).toEqual({ ...SANDBOX_POPULATION_REALISTIC, seed: 'bench-7' });
      const fromEnv = parseCliArgs([], { SANDBOX_POPULATION: 'realistic' });
      if (fromEnv.help) throw new Error('unexpected help');
      expect(fromEnv.options.population).toEqual(SANDBOX_POPULATION_REALISTIC);
      const off = parseCliArgs(['--population', 'off'], { SANDBOX_POPULATION: 'realistic' });
      if (off.help) throw new Error('unexpected help');
      expect(off.options.population).toBeUndefined();
      expect(() => parseCliArgs(['--population', 'everyone'], {})).toThrow(/realistic or off/);
    });
  });
});
