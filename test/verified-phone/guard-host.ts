/**
 * A host with guarded routes for the guard's attack suites: `/account/phone` (any age) and
 * `/account/payout` (`within` 10 minutes), the owner from `x-user`, on its own sandbox account and
 * a store the test picks (a MemoryStore instance the test keeps, so a restarted app finds it, or
 * Redis under a prefix of its own).
 */
import { createServer, request as httpRequest, type Server } from 'node:http';
import { afterEach, expect } from '@jest/globals';
import { Agent, fetch as undiciFetch } from 'undici';
import { Controller, Post } from '@nestjs/common';
import { RequireVerifiedPhone, VerifiedPhone } from '../../src/guard/verified-phone.decorators.js';
import type { VerifiedPhoneDetails } from '../../src/guard/verified-phone.request.js';
import type { VerificationModuleOptions } from '../../src/options/verification.options.js';
import { MemoryStore } from '../../src/store/memory.store.js';
import type { VerificationSandbox } from '../../src/testing/index.js';
import { sharedRedisUrl } from '../support/redis-server.js';
import { sandboxSuite, type SandboxSuite } from '../support/sandbox-suite.js';
import { call, createTestApp, type Platform, type TestApp } from '../support/verification-app.js';
import { uniqueKeyPrefix } from '../multi-instance/deployment.js';
import { moduleOptions } from '../webhooks/harness.js';

export const WITHIN_MS = 600_000;

function answer(details: VerifiedPhoneDetails) {
  return {
    phone: details.phoneNumber,
    verified_at: details.verifiedAt.toISOString(),
    claim: details.claim,
    test: details.test,
  };
}

@Controller('account')
export class GuardedController {
  @Post('phone')
  @RequireVerifiedPhone()
  phone(@VerifiedPhone('details') details: VerifiedPhoneDetails) {
    return answer(details);
  }

  @Post('payout')
  @RequireVerifiedPhone({ within: WITHIN_MS })
  payout(@VerifiedPhone('details') details: VerifiedPhoneDetails) {
    return answer(details);
  }

  @Post('demo')
  @RequireVerifiedPhone({ allowTestNumbers: true })
  demo(@VerifiedPhone('details') details: VerifiedPhoneDetails) {
    return answer(details);
  }
}

export type StoreKind = 'memory' | 'redis';

/** The store option of every app of one test: the same data across restarts. */
export function storeFor(
  kind: StoreKind,
  sb: VerificationSandbox,
): NonNullable<VerificationModuleOptions['store']> {
  return kind === 'memory'
    ? new MemoryStore({ clock: () => sb.now() })
    : { url: sharedRedisUrl(), keyPrefix: uniqueKeyPrefix('guard') };
}

export interface Account {
  apiKey: string;
  apiSecret: string;
  webhookSecret: string;
}

/** One app of the host on `account`, its API at `baseUrl` (the sandbox, or a proxy in front of it). */
export function bootGuardHost(
  platform: Platform,
  sb: VerificationSandbox,
  account: Account,
  overrides: Partial<VerificationModuleOptions> & { baseUrl?: string } = {},
): Promise<TestApp> {
  const { baseUrl, ...module } = overrides;
  // Claims outlive the payout's `within`, so that `within` decides.
  const base = moduleOptions(sb, { verifiedPhone: { claimTtlMs: 2 * WITHIN_MS }, ...module });
  return createTestApp({
    platform,
    module: {
      ...base,
      api: { ...base.api, baseUrl: baseUrl ?? sb.url, apiKey: account.apiKey, apiSecret: account.apiSecret },
      webhooks: { secret: account.webhookSecret },
    },
    controllers: [GuardedController],
  });
}

export const as = (user: string, extra: Record<string, string> = {}) => ({ 'x-user': user, ...extra });

/** Phone numbers `<prefix><two digits of the worker><serial>`: a block of 100 per file and worker. */
export function numbersFrom(prefix: string): () => string {
  let serial = 0;
  return () =>
    `${prefix}${String(process.pid % 100).padStart(2, '0')}${String(++serial % 100).padStart(2, '0')}`;
}

/** A suite whose records get lost: each boot of its guard host is on a new MemoryStore (see `lostRecordsSuite`). */
export interface LostRecordsSuite {
  readonly suite: SandboxSuite;
  /**
   * Boots the guard host on `account` and a new MemoryStore (the app the test booted before, and its
   * store, are closed first); `limits` as given (none: the module's own, off).
   */
  boot(account: Account, limits?: object): Promise<TestApp>;
  /** A deploy: the app restarts on a new MemoryStore with the default limits, the account and keys kept. */
  deploy(account: Account): Promise<TestApp>;
  /** A free start (a reverse flash call) of `phone` on the booted host, with `headers`: its verification id. */
  start(phone: string, headers?: Record<string, string>): Promise<string>;
}

/**
 * The life the rebuild meter suites share: a sandboxSuite, its guard host on a MemoryStore of its own
 * (closed after each test, after the host), and a deploy that loses every record the store held.
 */
export function lostRecordsSuite(
  platform: Platform,
  module: Partial<VerificationModuleOptions> = {},
): LostRecordsSuite {
  const suite = sandboxSuite();
  let store: MemoryStore | undefined;
  const closeStore = async () => {
    await store?.close();
    store = undefined;
  };
  afterEach(closeStore);
  const boot = async (account: Account, limits?: object) => {
    await suite.host?.close();
    suite.host = undefined;
    await closeStore();
    store = new MemoryStore({ clock: () => suite.sb.now() });
    suite.host = await bootGuardHost(platform, suite.sb, account, {
      store,
      ...module,
      ...(limits ? { limits } : {}),
    });
    return suite.host;
  };
  return {
    suite,
    boot,
    deploy: (account) => boot(account, {}),
    async start(phone, headers = {}) {
      const started = await call(
        suite.host!.url,
        'POST',
        '/verification/start',
        { phone_number: phone, method: 'reverse_flash_call' },
        headers,
      );
      expect(started.status).toBe(201);
      return String(started.body.verification_id);
    },
  };
}

/**
 * `count` POSTs of `body` to `url` with `headers`, `atOnce` at a time, over keep-alive connections of the burst's
 * own pool: their statuses. The pool is closed at the end, so no later burst picks a connection the host closed
 * while it lay idle (`read ECONNRESET` under load).
 */
export async function burst(
  count: number,
  atOnce: number,
  url: string,
  headers: Record<string, string>,
  body = '{}',
): Promise<number[]> {
  const statuses: number[] = [];
  const dispatcher = new Agent({ connections: atOnce });
  const send = async () => {
    const response = await undiciFetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body,
      dispatcher,
    });
    await response.arrayBuffer();
    return response.status;
  };
  try {
    for (let i = 0; i < count; i += atOnce)
      statuses.push(...(await Promise.all(Array.from({ length: Math.min(atOnce, count - i) }, send))));
  } finally {
    await dispatcher.close();
  }
  return statuses;
}

/**
 * A proxy in front of the sandbox whose session reads lack `verified_at` (an API that does not
 * say when): every other byte passes as it is.
 */
export async function withoutVerifiedAt(target: string): Promise<{ url: string; close(): Promise<void> }> {
  const upstream = new URL(target);
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const out = httpRequest(
        {
          host: upstream.hostname,
          port: upstream.port,
          method: req.method,
          path: req.url,
          headers: req.headers,
        },
        (answer) => {
          const body: Buffer[] = [];
          answer.on('data', (chunk: Buffer) => body.push(chunk));
          answer.on('end', () => {
            let text = Buffer.concat(body).toString('utf8');
            if (
              req.method === 'GET' &&
              /^\/v1\/verify\/[^/]+$/.test(req.url ?? '') &&
              answer.statusCode === 200
            ) {
              const json = JSON.parse(text) as Record<string, unknown>;
              delete json.verified_at;
              text = JSON.stringify(json);
            }
            const headers = { ...answer.headers, 'content-length': String(Buffer.byteLength(text)) };
            delete headers['transfer-encoding'];
            res.writeHead(answer.statusCode ?? 502, headers).end(text);
          });
        },
      );
      out.end(Buffer.concat(chunks));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
