/**
 * Shared by test/journeys: a host app on its own sandbox account (its own prices and balance), on a
 * frozen sandbox clock, with the sandbox's signed webhooks, the owner from `x-user`, and the client
 * routes called as a frontend would call them.
 */
import { afterEach } from '@jest/globals';
import type { LoggerService } from '@nestjs/common';
import { VerificationReconciler } from '../../src/sessions/verification.reconciler.js';
import type { SandboxAccountInput, VerificationSandbox } from '../../src/testing/index.js';
import type { VerificationModuleOptions } from '../../src/options/verification.options.js';
import { call, createTestApp, type Platform, type TestApp } from '../support/verification-app.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { moduleOptions } from '../webhooks/harness.js';

export const OWNER = 'user-1';

/** The owner header, or none (`null`: a caller without an owner, known by its IP and cookie). */
function who(owner: string | null): Record<string, string> {
  return owner === null ? {} : { 'x-user': owner };
}

export interface JourneyFixture {
  readonly sb: VerificationSandbox;
  /** The hosts the test booted, each closed after it (a test may boot several). */
  hosts: TestApp[];
  /** The test's account. */
  apiKey: string;
}

/** A frozen-clock sandbox per describe block (sandboxSuite); each test boots its host on an account of its own. */
export function journeyFixture(): JourneyFixture {
  const suite = sandboxSuite();
  const fixture = {
    hosts: [],
    get sb(): VerificationSandbox {
      return suite.sb;
    },
  } as unknown as JourneyFixture;
  afterEach(async () => {
    fixture.sb.clearFaults();
    await Promise.all(fixture.hosts.splice(0).map((host) => host.close()));
  });
  return fixture;
}

/**
 * Boots the test's host on a fresh account (webhooks to the host), with `module` over the webhook
 * harness's defaults (no protection unless `limits` is given, reconciler on demand).
 */
export async function journeyHost(
  fx: JourneyFixture,
  platform: Platform,
  module: Partial<VerificationModuleOptions> = {},
  account: SandboxAccountInput = {},
  app: { trustProxy?: boolean; logger?: LoggerService } = {},
): Promise<TestApp> {
  const credentials = await fx.sb.createAccount({ balance: 10_000, ...account });
  fx.apiKey = credentials.apiKey;
  const base = moduleOptions(fx.sb, module);
  const host = await createTestApp({
    platform,
    ...app,
    module: {
      ...base,
      api: { ...base.api, apiKey: credentials.apiKey, apiSecret: credentials.apiSecret },
      webhooks: { secret: credentials.webhookSecret },
    },
  });
  fx.hosts.push(host);
  await fx.sb.updateAccount(credentials.apiKey, { webhookUrl: `${host.url}/verification/webhooks` });
  return host;
}

/**
 * Another instance of the deployment journeyHost last booted: the same sandbox account and keys, `module`
 * (its store: the same Redis) as given. The sandbox's webhooks still go to the first.
 */
export async function secondInstance(
  fx: JourneyFixture,
  platform: Platform,
  module: Partial<VerificationModuleOptions>,
): Promise<TestApp> {
  const base = moduleOptions(fx.sb, module);
  const secrets = fx.sb.getAccount(fx.apiKey)! as { api_secret: string; webhook_secret: string };
  const host = await createTestApp({
    platform,
    trustProxy: true,
    module: {
      ...base,
      api: { ...base.api, apiKey: fx.apiKey, apiSecret: secrets.api_secret },
      webhooks: { secret: secrets.webhook_secret },
    },
  });
  fx.hosts.push(host);
  return host;
}

export type Answer = Awaited<ReturnType<typeof call>>;

export function start(
  host: TestApp,
  body: Record<string, unknown>,
  owner: string | null = OWNER,
  headers: Record<string, string> = {},
): Promise<Answer> {
  return call(host.url, 'POST', '/verification/start', body, { ...who(owner), ...headers });
}

export function switchMethod(
  host: TestApp,
  verificationId: unknown,
  method?: string,
  owner: string | null = OWNER,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const body =
    method === undefined ? { verification_id: verificationId } : { verification_id: verificationId, method };
  return call(host.url, 'POST', '/verification/switch', body, { ...who(owner), ...headers });
}

export function cancel(
  host: TestApp,
  verificationId: unknown,
  owner: string | null = OWNER,
): Promise<Answer> {
  return call(host.url, 'POST', '/verification/cancel', { verification_id: verificationId }, who(owner));
}

export function status(
  host: TestApp,
  verificationId: unknown,
  owner: string | null = OWNER,
): Promise<Answer> {
  return call(host.url, 'GET', `/verification/status/${String(verificationId)}`, undefined, who(owner));
}

export function check(
  host: TestApp,
  verificationId: unknown,
  code: string,
  owner: string | null = OWNER,
): Promise<Answer> {
  return call(host.url, 'POST', '/verification/check', { verification_id: verificationId, code }, who(owner));
}

export function reconciler(host: TestApp): VerificationReconciler {
  return host.app.get(VerificationReconciler, { strict: false });
}

/** The request ids of a number's sessions, oldest first. */
export function sessionIds(sb: VerificationSandbox, phone: string): string[] {
  return sb
    .sessionsFor(phone)
    .map((s) => s.request_id)
    .reverse();
}

let serial = 0;
/**
 * A fresh Russian mobile number for each call: +7 915, 3 digits of the process, 4 of a serial; past
 * 9 999 numbers (a merged spec's parts together) the 3 digits move on, so a number stays 10 digits.
 */
export function freshPhone(): string {
  serial += 1;
  const block = (process.pid + Math.floor(serial / 10_000)) % 1000;
  return `+7915${String(block).padStart(3, '0')}${String(serial % 10_000).padStart(4, '0')}`;
}

/** The problem document's essentials. */
export function problem(res: Answer): { status: number; error_code: unknown; retry_after: string | null } {
  return { status: res.status, error_code: res.body.error_code, retry_after: res.headers.get('retry-after') };
}

/** `POST /v1/verify/check` straight to the sandbox, as the end user's phone would finish a code method. */
export async function apiCheck(
  sb: VerificationSandbox,
  apiKey: string,
  requestId: string,
  code: string,
): Promise<void> {
  const account = sb.getAccount(apiKey)!;
  const auth = Buffer.from(`${apiKey}:${account.api_secret}`).toString('base64');
  const res = await fetch(`${sb.url}/v1/verify/check`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Basic ${auth}` },
    body: JSON.stringify({ request_id: requestId, code }),
  });
  await res.text();
}
