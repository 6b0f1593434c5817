import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { Webhook } from 'standardwebhooks';
import { VerificationSandbox, type SandboxAccountCredentials } from '../../src/testing/index.js';
import { api, control, initiate } from './sandbox-client.js';
import { WebhookReceiver } from './webhook-receiver.js';

/** Signed webhook delivery, retries on the sandbox clock, and webhook faults, against a local receiver. */
describe('sandbox webhooks', () => {
  let sb: VerificationSandbox;
  let receiver: WebhookReceiver;
  let c: SandboxAccountCredentials;

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    sb = await VerificationSandbox.start({ port: 0, webhookTimeoutMs: 300, webhookMaxAttempts: 3 });
    c = await sb.createAccount({ webhookUrl: receiver.url });
  });
  afterAll(async () => {
    await sb.close();
    await receiver.close();
  });
  beforeEach(() => {
    receiver.clear();
    sb.clearFaults();
  });

  const check = (id: string, code: string) =>
    api(sb, 'POST', '/v1/verify/check', { creds: c, body: { request_id: id, code } });
  /** Whatever the clock says, the signature must match what the package computes for the sent id and timestamp. */
  const signatureHolds = (headers: Record<string, string | string[] | undefined>, body: string): boolean => {
    const ts = new Date(Number(headers['webhook-timestamp']) * 1000);
    return (
      new Webhook(c.webhookSecret).sign(String(headers['webhook-id']), ts, body) ===
      headers['webhook-signature']
    );
  };

  it('POSTs verification.verified signed per Standard Webhooks, verifiable with the standardwebhooks package', async () => {
    const s = await initiate(sb, '+79997770001', 'sms', c);
    await check(s.request_id, sb.getSession(s.request_id)!.code!);
    await sb.webhooksIdle();
    expect(receiver.received).toHaveLength(1);
    const { headers, body } = receiver.received[0]!;
    expect(headers['content-type']).toBe('application/json');
    expect(headers['webhook-id']).toMatch(/^msg_[0-9a-f]+$/);
    expect(Number(headers['webhook-timestamp'])).toBe(
      Math.floor(Date.parse(JSON.parse(body).timestamp) / 1000),
    );
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    const payload = new Webhook(c.webhookSecret).verify(body, headers as Record<string, string>);
    const session = sb.getSession(s.request_id)!;
    expect(payload).toEqual({
      type: 'verification.verified',
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      data: {
        request_id: s.request_id,
        phone_number: '+79997770001',
        method: 'sms',
        status: 'verified',
        awaiting_code: false,
        verified_at: session.verified_at,
        expires_at: session.expires_at,
      },
    });
    expect(() =>
      new Webhook(sb.demoAccount.webhookSecret).verify(body, headers as Record<string, string>),
    ).toThrow();
  });

  it('sends code_required, failed and expired events with the session state at that moment', async () => {
    const op = await initiate(sb, '+79997770002', 'operator_id', c, { expiry_seconds: 30 });
    await sb.operator(op.request_id, 'fallback');
    const m = await initiate(sb, '+79997770003', 'msgr1', c);
    for (let i = 0; i < 3; i++)
      await check(m.request_id, sb.getSession(m.request_id)!.code === '0000' ? '1111' : '0000');
    const e = await initiate(sb, '+79997770004', 'reverse_flash_call', c, { expiry_seconds: 30 });
    await sb.advance(30_000);
    await sb.webhooksIdle();
    const events = receiver.events();
    expect(events.find((x) => x.type === 'verification.code_required')!.data).toMatchObject({
      request_id: op.request_id,
      method: 'operator_id',
      status: 'sent',
      awaiting_code: true,
    });
    expect(events.find((x) => x.type === 'verification.failed')!.data).toMatchObject({
      request_id: m.request_id,
      method: 'msgr1',
      status: 'failed',
    });
    expect(events.filter((x) => x.type === 'verification.expired').map((x) => x.data.request_id)).toEqual(
      expect.arrayContaining([e.request_id, op.request_id]),
    );
    for (const r of receiver.received) expect(signatureHolds(r.headers, r.body)).toBe(true);
  });

  it('sends verification.verified for operator_id after the accepted code, and failed for an operator failure', async () => {
    const a = await initiate(sb, '+79997770005', 'operator_id', c);
    await sb.operator(a.request_id, 'fallback');
    await check(a.request_id, sb.getSession(a.request_id)!.code!);
    await sb.advance(500);
    const b = await initiate(sb, '+79997770006', 'operator_id', c);
    await sb.operator(b.request_id, 'fail');
    await sb.webhooksIdle();
    const types = receiver.events().map((x) => `${x.type} ${x.data.request_id}`);
    expect(types).toEqual(
      expect.arrayContaining([
        `verification.code_required ${a.request_id}`,
        `verification.verified ${a.request_id}`,
        `verification.failed ${b.request_id}`,
      ]),
    );
  });

  it('retries a non-2xx answer with backoff on the sandbox clock, with the same webhook-id', async () => {
    receiver.script.push(500, 503);
    const s = await initiate(sb, '+79997770010', 'reverse_flash_call', c);
    await sb.call(s.request_id, '+79997770010');
    await sb.webhooksIdle();
    expect(receiver.received).toHaveLength(1);
    // Backoff 1 s then 4 s; the clock also follows real time, hence the checks well inside each interval.
    await sb.advance(500);
    await sb.webhooksIdle();
    expect(receiver.received).toHaveLength(1);
    await sb.advance(500);
    await sb.webhooksIdle();
    expect(receiver.received).toHaveLength(2);
    await sb.advance(3_000);
    await sb.webhooksIdle();
    expect(receiver.received).toHaveLength(2);
    await sb.advance(1_000);
    await sb.webhooksIdle();
    expect(receiver.received).toHaveLength(3);
    const ids = new Set(receiver.received.map((r) => r.headers['webhook-id']));
    expect(ids.size).toBe(1);
    for (const r of receiver.received) expect(signatureHolds(r.headers, r.body)).toBe(true);
    const log = sb.webhookLog().filter((d) => d.request_id === s.request_id);
    expect(log.map((d) => [d.attempt, d.status])).toEqual([
      [1, 500],
      [2, 503],
      [3, 200],
    ]);
    expect((await control(sb, 'GET', '/webhooks')).body.deliveries).toEqual(sb.webhookLog());
    // `?request_id=` narrows the log to one session (any case of the id).
    expect(sb.webhookLog().some((d) => d.request_id !== s.request_id)).toBe(true);
    expect(
      (await control(sb, 'GET', `/webhooks?request_id=${s.request_id.toUpperCase()}`)).body.deliveries,
    ).toEqual(log);
  });

  it('gives up after the configured number of attempts', async () => {
    receiver.script.push(500, 500, 500, 500);
    const s = await initiate(sb, '+79997770011', 'reverse_flash_call', c);
    await sb.call(s.request_id, '+79997770011');
    for (let i = 0; i < 4; i++) {
      await sb.webhooksIdle();
      await sb.advance(60_000);
    }
    await sb.webhooksIdle();
    expect(receiver.received).toHaveLength(3);
  });

  it('records a time-out and retries it', async () => {
    receiver.hang = true;
    const s = await initiate(sb, '+79997770012', 'reverse_flash_call', c);
    await sb.call(s.request_id, '+79997770012');
    await sb.webhooksIdle();
    receiver.hang = false;
    await sb.advance(1_000);
    await sb.webhooksIdle();
    const log = sb.webhookLog().filter((d) => d.request_id === s.request_id);
    expect(log.map((d) => d.status)).toEqual(['timeout', 200]);
  });

  it('records a connection error as error', async () => {
    const dead = await WebhookReceiver.start();
    await dead.close();
    const d = await sb.createAccount({ webhookUrl: dead.url });
    const s = await initiate(sb, '+79997770013', 'reverse_flash_call', d);
    await sb.call(s.request_id, '+79997770013');
    await sb.webhooksIdle();
    expect(sb.webhookLog().filter((x) => x.request_id === s.request_id)[0]).toMatchObject({
      status: 'error',
      attempt: 1,
      url: dead.url,
    });
  });

  it('sends nothing for an account without a webhook URL', async () => {
    const before = sb.webhookLog().length;
    const s = await initiate(sb, '+79997770014', 'reverse_flash_call');
    await sb.call(s.request_id, '+79997770014');
    await sb.webhooksIdle();
    expect(sb.webhookLog()).toHaveLength(before);
  });

  describe('faults', () => {
    const verifyReverse = async (phone: string): Promise<string> => {
      const s = await initiate(sb, phone, 'reverse_flash_call', c);
      await sb.call(s.request_id, phone);
      return s.request_id;
    };

    it('drop: the message is logged dropped and never delivered', async () => {
      const res = await control(sb, 'POST', '/faults', { webhooks: { drop_next: 1 } });
      expect(res.status).toBe(201);
      const id = await verifyReverse('+79997770020');
      const kept = await verifyReverse('+79997770021');
      await sb.webhooksIdle();
      await sb.advance(600_000);
      await sb.webhooksIdle();
      const mine = receiver.events().filter((e) => [id, kept].includes(e.data.request_id as string));
      expect(mine.map((e) => e.data.request_id)).toEqual([kept]);
      expect(sb.webhookLog().filter((d) => d.request_id === id)).toEqual([
        expect.objectContaining({ status: 'dropped', attempt: 1 }),
      ]);
    });

    it('drop_rate 1 drops every message until cleared', async () => {
      sb.addFault({ webhooks: { drop_rate: 1 } });
      await verifyReverse('+79997770022');
      await sb.webhooksIdle();
      expect(receiver.received).toHaveLength(0);
      sb.clearFaults();
      await verifyReverse('+79997770023');
      await sb.webhooksIdle();
      expect(receiver.received).toHaveLength(1);
    });

    it('duplicate: the same message arrives N times with one webhook-id', async () => {
      sb.addFault({ webhooks: { duplicate_next: 1, duplicates: 3 } });
      await verifyReverse('+79997770024');
      await sb.webhooksIdle();
      expect(receiver.received).toHaveLength(3);
      expect(new Set(receiver.received.map((r) => r.headers['webhook-id'])).size).toBe(1);
      expect(new Set(receiver.received.map((r) => r.body)).size).toBe(1);
    });

    it('delay: the first attempt waits delay_ms on the sandbox clock', async () => {
      sb.addFault({ webhooks: { delay_ms: 5_000 } });
      await verifyReverse('+79997770025');
      await sb.webhooksIdle();
      expect(receiver.received).toHaveLength(0);
      await sb.advance(5_000);
      await sb.webhooksIdle();
      expect(receiver.received).toHaveLength(1);
    });

    it('reorder: messages are held for the window, then delivered newest first', async () => {
      sb.addFault({ webhooks: { reorder: true, reorder_window_ms: 2_000 } });
      const first = await verifyReverse('+79997770026');
      const second = await verifyReverse('+79997770027');
      const third = await verifyReverse('+79997770028');
      await sb.webhooksIdle();
      expect(receiver.received).toHaveLength(0);
      await sb.advance(2_000);
      await sb.webhooksIdle();
      expect(receiver.events().map((e) => e.data.request_id)).toEqual([third, second, first]);
    });

    it('refuses a malformed webhook fault and changes nothing', async () => {
      for (const body of [
        { webhooks: { drop_rate: 2 } },
        { webhooks: { duplicates: 1 } },
        { webhooks: { nope: 1 } },
      ]) {
        expect((await control(sb, 'POST', '/faults', body)).status).toBe(400);
      }
      await verifyReverse('+79997770029');
      await sb.webhooksIdle();
      expect(receiver.received).toHaveLength(1);
    });
  });
});
