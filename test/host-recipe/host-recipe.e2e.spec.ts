/**
 * The README's host recipe, built as written (test/host-recipe/app.module.ts) on Fastify and run
 * against the sandbox: the host's guard authenticates every client route, verifications are bound to
 * the user it sets, the sandbox's signed webhooks pass the guard, the listener learns the verified
 * number once, and another user holding the handle gets 404. The host serves everything under a global
 * prefix (`/api`), and the browser client follows the status stream with the bearer token (read with
 * fetch: an EventSource cannot send the header), without falling back to polling.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ConfigModule } from '@nestjs/config';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { Agent, fetch as undiciFetch } from 'undici';
import { VerificationSandbox } from 'nestjs-phone-verification/testing';
import { createVerificationClient, type VerificationState } from '../../src/client/index.js';
import { call } from '../support/verification-app.js';
import { appModule, Users } from './app.module.js';

/** What the host's environment holds in production; a test adds the sandbox's clock. */
function configuration(webhookSecret: string | undefined) {
  return ConfigModule.forRoot({
    isGlobal: true,
    ignoreEnvFile: true,
    load: [
      () => ({
        VERIFICATION_API_URL: sb.url,
        VERIFICATION_API_KEY: sb.demoAccount.apiKey,
        VERIFICATION_API_SECRET: sb.demoAccount.apiSecret,
        VERIFICATION_WEBHOOK_SECRET: webhookSecret,
        VERIFICATION_CLOCK: () => sb.now(),
      }),
    ],
  });
}

async function boot(configModule: ReturnType<typeof configuration>): Promise<NestFastifyApplication> {
  const ref = await Test.createTestingModule({ imports: [appModule(configModule)] }).compile();
  const host = ref.createNestApplication<NestFastifyApplication>(new FastifyAdapter(), {
    rawBody: true,
    logger: false,
  });
  // The host serves its API under /api: the module's routes (and its webhook) move there.
  host.setGlobalPrefix('api');
  await host.listen(0, '127.0.0.1');
  return host;
}

const urlOf = (host: NestFastifyApplication) =>
  `http://127.0.0.1:${(host.getHttpServer().address() as { port: number }).port}`;

let sb: VerificationSandbox;

describe('the README host recipe: Fastify, an auth guard, owner binding, forRootAsync with ConfigService', () => {
  let app: NestFastifyApplication;
  let url: string;
  const as = (token: string) => ({ authorization: `Bearer ${token}` });

  beforeAll(async () => {
    sb = await VerificationSandbox.start({ port: 0, freezeClock: true });
    app = await boot(configuration(sb.demoAccount.webhookSecret));
    url = urlOf(app);
    await sb.updateAccount(sb.demoAccount.apiKey, { webhookUrl: `${url}/api/verification/webhooks` });
  });
  afterAll(async () => {
    await app?.close();
    await sb?.close();
  });

  it('verifies a number for the signed-in user; another user gets 404; the listener hears it once', async () => {
    const phone = '+79123450801';
    const anonymous = await call(url, 'POST', '/api/verification/start', {
      phone_number: phone,
      method: 'sms',
    });
    // The host's guard decided: its 401 reaches the browser as the guard threw it.
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toMatchObject({ statusCode: 401 });
    expect(anonymous.body).not.toHaveProperty('error_code');
    expect(sb.requestCount('POST /v1/verify')).toBe(0);

    const started = await call(
      url,
      'POST',
      '/api/verification/start',
      { phone_number: phone, method: 'sms' },
      as('token-alice'),
    );
    expect(started.status).toBe(201);
    const id = started.body.verification_id as string;
    const requestId = sb.sessionsFor(phone)[0]!.request_id;
    await sb.deliver(requestId);
    const code = sb.getSession(requestId)!.code!;

    // Bob holds Alice's handle: to him it does not exist.
    const bobStatus = await call(url, 'GET', `/api/verification/status/${id}`, undefined, as('token-bob'));
    expect(bobStatus.status).toBe(404);
    expect(bobStatus.body.error_code).toBe('not_found');
    const bobCheck = await call(
      url,
      'POST',
      '/api/verification/check',
      { verification_id: id, code },
      as('token-bob'),
    );
    expect(bobCheck.status).toBe(404);
    expect(sb.getSession(requestId)!.status).not.toBe('verified');

    const aliceStatus = await call(
      url,
      'GET',
      `/api/verification/status/${id}`,
      undefined,
      as('token-alice'),
    );
    expect(aliceStatus.body).toMatchObject({ status: 'delivered', awaiting_code: true, code_length: 6 });
    const checked = await call(
      url,
      'POST',
      '/api/verification/check',
      { verification_id: id, code },
      as('token-alice'),
    );
    expect(checked.body).toEqual({ verification_id: id, status: 'verified', verified: true });

    // The sandbox's signed webhook passed the host's guard, and was a duplicate of what check emitted.
    await sb.webhooksIdle();
    const deliveries = sb.webhookLog().filter((d) => d.request_id === requestId);
    expect(deliveries.map((d) => [d.event, d.status])).toEqual([['verification.verified', 200]]);
    expect(app.get(Users).verifiedPhones).toEqual([['alice', phone]]);
  });

  it('the browser client streams the status with the bearer token under the global prefix, and never polls', async () => {
    const phone = '+79123450802';
    const routes: string[] = [];
    // The page's own connections, as a browser's are: closed with the page, not left to the host's shutdown (a
    // stream the page aborts as the host ends it leaves Node's fetch a fresh connection that never sends a
    // request, which the host's close then waits on).
    const browser = new Agent();
    const client = createVerificationClient({
      baseUrl: `${url}/api/verification`,
      headers: () => as('token-alice'),
      fetch: (input, init) => {
        routes.push(`${init.method} ${new URL(input).pathname}`);
        return undiciFetch(input, { ...init, dispatcher: browser }) as unknown as Promise<Response>;
      },
      storage: null,
      webOtp: false,
    });
    const until = (test: (state: VerificationState) => boolean) =>
      new Promise<VerificationState>((resolve) => {
        if (test(client.getState())) return resolve(client.getState());
        const stop = client.subscribe((state) => {
          if (!test(state)) return;
          stop();
          resolve(state);
        });
      });
    try {
      await client.start({ phoneNumber: phone, method: 'sms' });
      expect(client.getState()).toMatchObject({ phase: 'awaiting_user', connection: 'stream' });
      const requestId = sb.sessionsFor(phone)[0]!.request_id;
      // The webhook reports the delivery; only the stream can tell the page.
      await sb.deliver(requestId);
      await until((state) => state.status === 'delivered');
      await client.check(sb.getSession(requestId)!.code!);
      expect(client.getState()).toMatchObject({ phase: 'verified', status: 'verified' });
      const id = client.getState().verificationId!;
      expect(routes).toEqual([
        'POST /api/verification/start',
        `GET /api/verification/status/${id}/events`,
        'POST /api/verification/check',
      ]);
    } finally {
      client.dispose();
      await browser.destroy();
    }
  });

  it('with no webhook secret configured, the same host boots with its webhook route switched off', async () => {
    const host = await boot(configuration(undefined));
    try {
      const hook = await call(urlOf(host), 'POST', '/api/verification/webhooks', {
        type: 'verification.verified',
      });
      expect(hook.status).toBe(404);
      expect(
        (await call(urlOf(host), 'GET', '/api/verification/methods', undefined, as('token-bob'))).status,
      ).toBe(200);
    } finally {
      await host.close();
    }
  });
});
