import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { VerificationSandbox } from '../../src/testing/index.js';
import { CapturingLogger, captureProcessOutput } from '../support/log-capture.js';
import { call, PLATFORMS, type TestApp } from '../support/verification-app.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

const API_SECRET = 'sk_test_9f8e7d6c5b4a39281706f5e4d3c2b1a0';
const WEBHOOK_SECRET = 'whsec_' + Buffer.from('webhook-secret-for-leak-test-0123').toString('base64');

describe.each(PLATFORMS)('no secret in any response, log line or output (%s)', (platform) => {
  let output: ReturnType<typeof captureProcessOutput>;
  // Registered before the suite's hooks: the capture begins before the sandbox starts.
  beforeAll(() => {
    output = captureProcessOutput();
  });
  const suite = sandboxSuite({
    freezeClock: false,
    demoAccount: { apiSecret: API_SECRET, webhookSecret: WEBHOOK_SECRET },
  });
  // Registered after the suite's hooks: the capture ends after the host and the sandbox closed.
  afterAll(() => {
    output?.stop();
  });
  let sb: VerificationSandbox;
  let host: TestApp;
  const logger = new CapturingLogger();
  const responses: string[] = [];

  beforeAll(async () => {
    sb = suite.sb;
    host = await suite.boot({
      platform,
      logger,
      module: {
        api: { baseUrl: sb.url, apiKey: sb.demoAccount.apiKey, apiSecret: API_SECRET, timeoutMs: 300 },
        webhooks: { secret: WEBHOOK_SECRET },
        clock: () => sb.now(),
        limits: { enabled: false },
      },
    });
  });

  async function record(
    method: 'GET' | 'POST',
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ) {
    const res = await call(host.url, method, path, body, headers);
    responses.push(`${res.status} ${JSON.stringify([...res.headers.entries()])} ${res.text}`);
    return res;
  }

  it('runs a whole flow with errors and upstream faults', async () => {
    const phone = '+79123450001';
    const started = await record('POST', '/verification/start', { phone_number: phone, method: 'sms' });
    expect(started.status).toBe(201);
    const id = started.body.verification_id as string;
    expect((await record('POST', '/verification/check', { verification_id: id, code: '0000' })).status).toBe(
      400,
    );
    const requestId = sb.sessionsFor(phone)[0].request_id as string;
    await sb.deliver(requestId);
    const code = sb.getSession(requestId)!.code as string;
    expect((await record('POST', '/verification/check', { verification_id: id, code })).status).toBe(200);
    expect((await record('GET', `/verification/status/${id}`)).status).toBe(200);
    expect((await record('GET', '/verification/status/forged')).status).toBe(404);
    await record(
      'POST',
      '/verification/webhooks',
      { type: 'verification.verified', data: { request_id: requestId } },
      {
        'webhook-id': 'msg_x',
        'webhook-timestamp': String(Math.floor(sb.now() / 1000)),
        'webhook-signature': 'v1,AAAA',
      },
    );
    for (const fault of [
      { kind: 'status', status: 401 },
      { kind: 'status', status: 500 },
      { kind: 'latency', latency_ms: 600 },
      { kind: 'reset' },
      { kind: 'html' },
    ] as const) {
      sb.addFault({ route: '*', count: 0, ...fault });
      const res = await record('POST', '/verification/start', {
        phone_number: '+79123450002',
        method: 'sms',
      });
      expect(res.status).toBe(503);
      await record('GET', `/verification/status/${id}`);
      sb.clearFaults();
    }
    await sb.updateAccount(sb.demoAccount.apiKey, { balance: 0 });
    expect(
      (await record('POST', '/verification/start', { phone_number: '+79123450003', method: 'sms' })).status,
    ).toBe(503);
    expect(logger.lines.length).toBeGreaterThan(0);
  });

  it('finds neither the API secret, its Basic header nor the webhook secret anywhere', () => {
    const basic = Buffer.from(`${sb.demoAccount.apiKey}:${API_SECRET}`).toString('base64');
    const webhookKey = WEBHOOK_SECRET.slice('whsec_'.length);
    const haystacks = {
      responses: responses.join('\n'),
      logs: logger.lines.join('\n'),
      output: output.text(),
    };
    for (const [where, text] of Object.entries(haystacks)) {
      for (const needle of [API_SECRET, basic, basic.slice(8, 40), WEBHOOK_SECRET, webhookKey]) {
        if (text.includes(needle)) throw new Error(`a secret appears in ${where}`);
      }
    }
    expect(responses.length).toBeGreaterThan(10);
  });
});
