import { afterEach, describe, expect, it } from '@jest/globals';
import { MemoryStore } from '../../src/store/memory.store.js';
import { VerificationSandbox } from '../../src/testing/index.js';
import { VerificationService } from '../../src/verification/verification.service.js';
import { CapturingLogger } from '../support/log-capture.js';
import { call, type TestApp } from '../support/verification-app.js';
import { bootHost } from './support/ops-host.js';

const PHONE = '+79123456789';
const API_SECRET = 'sk_live_5d41402abc4b2a76b9719d911017c592';
const WEBHOOK_SECRET = 'whsec_' + Buffer.from('operations-log-test-webhook-key-0001').toString('base64');

describe('logs over a whole flow: personal data masked, secrets never', () => {
  let sb: VerificationSandbox | undefined;
  let host: TestApp | undefined;
  afterEach(async () => {
    await host?.close();
    await sb?.close();
    host = sb = undefined;
  });

  async function boot(module: Parameters<typeof bootHost>[0]['module'], appLogger?: CapturingLogger) {
    sb = await VerificationSandbox.start({
      port: 0,
      demoAccount: { apiSecret: API_SECRET, webhookSecret: WEBHOOK_SECRET },
    });
    host = await bootHost({
      sb,
      logger: appLogger,
      module: {
        api: { baseUrl: sb.url, apiKey: sb.demoAccount.apiKey, apiSecret: API_SECRET, maxRetries: 0 },
        webhooks: { secret: WEBHOOK_SECRET },
        ...module,
      },
    });
    await sb.updateAccount(sb.demoAccount.apiKey, { webhookUrl: `${host.url}/verification/webhooks` });
    return { sb, host };
  }

  /** start, wrong code, right code, status, the signed webhook, and a 402: the routes' whole life. */
  async function flow(sb: VerificationSandbox, host: TestApp) {
    const start = await call(host.url, 'POST', '/verification/start', { phone_number: PHONE, method: 'sms' });
    expect(start.status).toBe(201);
    const handle = start.body.verification_id as string;
    const requestId = sb.sessionsFor(PHONE)[0].request_id as string;
    await sb.deliver(requestId);
    const check = (code: string) =>
      call(host.url, 'POST', '/verification/check', { verification_id: handle, code });
    expect((await check('000000')).status).toBe(400);
    expect((await check(sb.getSession(requestId)!.code as string)).status).toBe(200);
    expect((await call(host.url, 'GET', `/verification/status/${handle}`)).body.status).toBe('verified');
    await sb.webhooksIdle();
    const delivered = sb.webhookLog().filter((d) => d.request_id === requestId);
    expect(delivered.map((d) => [d.event, d.status])).toEqual([['verification.verified', 200]]);
    await sb.updateAccount(sb.demoAccount.apiKey, { balance: 0 });
    expect(
      (await call(host.url, 'POST', '/verification/start', { phone_number: '+79123456788', method: 'sms' }))
        .status,
    ).toBe(503);
    return { handle, requestId };
  }

  function secretsIn(text: string): string[] {
    const basic = Buffer.from(`${sb!.demoAccount.apiKey}:${API_SECRET}`).toString('base64');
    const needles = {
      'api secret': API_SECRET,
      'Basic header': basic,
      'part of the Basic header': basic.slice(10, 40),
      'webhook secret': WEBHOOK_SECRET,
      'webhook key': WEBHOOK_SECRET.slice('whsec_'.length),
    };
    return Object.entries(needles)
      .filter(([, needle]) => text.includes(needle))
      .map(([what]) => what);
  }

  it('every line of the app (module and Nest) carries context, masked phones and short ids, and no secret', async () => {
    const logger = new CapturingLogger();
    const { sb, host } = await boot({ logLevels: ['log', 'warn', 'error', 'debug', 'verbose'] }, logger);
    const { handle, requestId } = await flow(sb, host);
    const text = logger.lines.join('\n');

    for (const personal of [PHONE, PHONE.slice(1), PHONE.slice(2), '+79123456788'])
      expect(text).not.toContain(personal);
    expect(text).not.toContain(requestId);
    expect(text).not.toContain(handle);
    expect(secretsIn(text)).toEqual([]);
    expect(text).not.toMatch(/Basic\s+[A-Za-z0-9+/=]{8,}/);

    const short = `${requestId.slice(0, 8)}…`;
    const ours = logger.lines.filter((l) => l.endsWith(' PhoneVerification'));
    const find = (pattern: RegExp) => ours.filter((l) => pattern.test(l));
    expect(
      find(
        /^log start route=start method=sms phone=\+7\*{6}6789 request_id=\S+ status=sent coalesced=false latency_ms=\d+/,
      ),
    ).toHaveLength(1);
    expect(
      find(
        new RegExp(
          `^log check refused route=check method=sms request_id=${short} .*latency_ms=\\d{1,5} .*error_code=invalid_code http_status=400 attempts_remaining=2`,
        ),
      ),
    ).toHaveLength(1);
    expect(
      find(
        new RegExp(
          // A check's time, from its own start: well under 100 s of the wall clock.
          `^log check route=check method=sms request_id=${short} status=verified verified=true latency_ms=\\d{1,5} `,
        ),
      ),
    ).toHaveLength(1);
    expect(
      find(
        new RegExp(
          `^log verification\\.verified method=sms phone=\\+7\\*{6}6789 request_id=${short} status=verified source=check`,
        ),
      ),
    ).toHaveLength(1);
    expect(find(/^debug status route=status method=sms request_id=\S+ status=verified/)).toHaveLength(1);
    expect(
      find(
        /^debug upstream request operation=initiate route="POST \/v1\/verify" upstream_status=201 latency_ms=\d+ attempt=1/,
      ),
    ).toHaveLength(1);
    expect(
      find(
        /^warn upstream request failed operation=initiate route="POST \/v1\/verify" upstream_status=402 latency_ms=\d+ attempt=1 error=insufficient_balance/,
      ),
    ).toHaveLength(1);
    expect(
      find(
        /^warn start failed route=start method=sms phone=\+7\*{6}6788 latency_ms=\d+ error_code=service_unavailable http_status=503/,
      ),
    ).toHaveLength(1);
    expect(
      find(/^error balance insufficient: the API refused a start with 402 amount=0 currency=RUB/),
    ).toHaveLength(1);
  });

  it('goes to the host’s logger when given one, and honours maskPhoneNumbers: false (secrets still never)', async () => {
    const hostLogger = new CapturingLogger();
    const appLogger = new CapturingLogger();
    const { sb, host } = await boot({ logger: hostLogger, maskPhoneNumbers: false }, appLogger);
    await flow(sb, host);
    expect(appLogger.lines.filter((l) => l.endsWith(' PhoneVerification'))).toEqual([]);
    const text = hostLogger.lines.join('\n');
    expect(text).toContain(`log start route=start method=sms phone=${PHONE} `);
    expect(secretsIn(text)).toEqual([]);
    // Default levels: no debug lines.
    expect(hostLogger.lines.filter((l) => l.startsWith('debug'))).toEqual([]);
  });

  it('a refused switch is logged as the switch route’s, not as a start’s, with its latency', async () => {
    const hostLogger = new CapturingLogger();
    const { sb, host } = await boot({ logger: hostLogger });
    const start = await call(host.url, 'POST', '/verification/start', { phone_number: PHONE, method: 'sms' });
    const handle = start.body.verification_id;
    const requestId = sb.sessionsFor(PHONE)[0].request_id as string;
    await sb.deliver(requestId);
    const code = sb.getSession(requestId)!.code;
    expect(
      (await call(host.url, 'POST', '/verification/check', { verification_id: handle, code })).status,
    ).toBe(200);
    // Verified: nothing left to switch from.
    const refused = await call(host.url, 'POST', '/verification/switch', { verification_id: handle });
    expect(refused.status).toBe(409);
    const ours = hostLogger.lines.filter((l) => / (switch|start) (refused|failed) /.test(l));
    expect(ours).toHaveLength(1);
    expect(ours[0]).toMatch(
      new RegExp(
        `^log switch refused route=switch .*latency_ms=\\d+ error_code=${String(refused.body.error_code)} http_status=409`,
      ),
    );
  });

  it('a start the spend cap refused is a refusal (log, its reason), not an outage (warn start failed), though both answer 503', async () => {
    const hostLogger = new CapturingLogger();
    const { sb, host } = await boot({
      logger: hostLogger,
      limits: { startPerIp: false, pumping: false, spendCap: { amount: 3, windowMs: 86_400_000 } },
    });
    const start = (phone_number: string) =>
      call(host.url, 'POST', '/verification/start', { phone_number, method: 'sms' });
    expect((await start(PHONE)).status).toBe(201);
    const refused = await start('+79123456788');
    expect(problemOf(refused)).toEqual([503, 'service_unavailable', 'spend_cap']);
    const ours = hostLogger.lines.filter((l) => / start (refused|failed) /.test(l));
    expect(ours).toHaveLength(1);
    expect(ours[0]).toMatch(
      /^log start refused route=start method=sms phone=\+7\*{6}6788 reason=spend_cap latency_ms=\d+ error_code=service_unavailable http_status=503/,
    );
    // The API's own outage on the same route is the operator's warning.
    await sb.updateAccount(sb.demoAccount.apiKey, { balance: 0 });
    await sb.advance(86_400_000 + 1000);
    expect((await start('+79123456787')).status).toBe(503);
    expect(hostLogger.lines.filter((l) => / start (refused|failed) /.test(l)).slice(1)).toEqual([
      expect.stringMatching(
        /^warn start failed route=start method=sms phone=\+7\*{6}6787 latency_ms=\d+ error_code=service_unavailable http_status=503/,
      ),
    ]);
  });

  it('a start refused for its input is a debug line (the caller’s mistake, not the operator’s news); at default levels none', async () => {
    const refusedLines = (logger: CapturingLogger) =>
      logger.lines.filter((l) => / start (refused|failed) /.test(l));
    const bad = (host: TestApp) =>
      call(host.url, 'POST', '/verification/start', { phone_number: '+7912', method: 'sms' });
    const quiet = new CapturingLogger();
    const first = await boot({ logger: quiet });
    const refused = await bad(first.host);
    expect(refused.status).toBe(400);
    expect(refused.body.error_code).toBe('validation_error');
    expect(refusedLines(quiet)).toEqual([]);
    await host!.close();
    await sb!.close();

    const verbose = new CapturingLogger();
    const second = await boot({ logger: verbose, logLevels: ['log', 'warn', 'error', 'debug'] });
    expect((await bad(second.host)).status).toBe(400);
    expect(refusedLines(verbose)).toEqual([
      expect.stringMatching(/^debug start refused route=start .*error_code=validation_error http_status=400/),
    ]);
  });

  it('a store that fails a read is an error line naming the route that met it (the status route, getVerifiedPhone, cancel)', async () => {
    const hostLogger = new CapturingLogger();
    const memory = new MemoryStore();
    let failing = false;
    // The host's store, whose reads fail once `failing` is set (a store outage as the module meets it).
    const store = new Proxy(memory, {
      get(target, prop) {
        if (failing && prop === 'get') return () => Promise.reject(new Error('store down'));
        const value = Reflect.get(target, prop, target) as unknown;
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const { host } = await boot({ logger: hostLogger, store });
    const start = await call(host.url, 'POST', '/verification/start', { phone_number: PHONE, method: 'sms' });
    expect(start.status).toBe(201);
    const id = start.body.verification_id as string;
    failing = true;
    const read = await call(host.url, 'GET', `/verification/status/${id}`);
    expect(read.status).toBeGreaterThanOrEqual(500);
    await expect(host.app.get(VerificationService).getVerifiedPhone(id)).rejects.toBeDefined();
    const cancel = await call(host.url, 'POST', '/verification/cancel', { verification_id: id });
    expect(cancel.status).toBeGreaterThanOrEqual(500);
    failing = false;
    await memory.close();
    const failures = hostLogger.lines.filter((l) => / failed /.test(l));
    expect(failures).toEqual([
      expect.stringMatching(/^error status failed route=status error=/),
      expect.stringMatching(/^error getVerifiedPhone failed route=getVerifiedPhone error=/),
      expect.stringMatching(/^error cancel failed route=cancel error=/),
    ]);
  });

  it('writes nothing with logLevels: false, and only errors with logLevels: ["error"]', async () => {
    const silent = new CapturingLogger();
    const first = await boot({ logger: silent, logLevels: false });
    await flow(first.sb, first.host);
    expect(silent.lines).toEqual([]);
    await host!.close();
    await sb!.close();

    const errorsOnly = new CapturingLogger();
    const second = await boot({ logger: errorsOnly, logLevels: ['error'] });
    await flow(second.sb, second.host);
    expect(errorsOnly.lines).toEqual([
      'error balance insufficient: the API refused a start with 402 amount=0 currency=RUB PhoneVerification',
    ]);
  });
});

function problemOf(res: Awaited<ReturnType<typeof call>>): unknown[] {
  return [res.status, res.body.error_code, res.body.reason];
}
