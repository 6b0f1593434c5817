/**
 * Shared by test/webhooks, test/events and test/reconciler: a host app wired to the sandbox's
 * signed webhooks, sessions started through the module, and the end user's side of each method
 * played through the sandbox (outcomes reach the host only by webhook or by polling, never by the
 * host's own check route, unless a test says so).
 */
import type { INestApplication, LoggerService } from '@nestjs/common';
import { Webhook } from 'standardwebhooks';
import { VerificationReconciler } from '../../src/sessions/verification.reconciler.js';
import type { VerificationEvent } from '../../src/core/verification-events.js';
import type { SandboxMethod, VerificationSandbox } from '../../src/testing/index.js';
import type { SandboxAccountCredentials } from '../../src/testing/sandbox.options.js';
import type { VerificationModuleOptions } from '../../src/options/verification.options.js';
import { call, createTestApp, type Platform, type TestApp } from '../support/verification-app.js';

export const METHODS: SandboxMethod[] = [
  'reverse_flash_call',
  'flash_call',
  'msgr1_otp',
  'msgr2_bot',
  'sms',
  'operator_id',
];
/** Methods a wrong code can fail (reverse_flash_call has no code; operator_id fails by the operator). */
export const CODE_METHODS: SandboxMethod[] = ['flash_call', 'msgr1_otp', 'msgr2_bot', 'sms'];

export type Outcome = 'verified' | 'failed' | 'expired';

export interface HostOptions {
  /** Merged over the defaults (webhooks with the demo account's secret, no limits, no GET retries). */
  module?: Partial<VerificationModuleOptions>;
  rawBody?: boolean;
  /** The host's own body parsers instead of Nest's (createTestApp's `bodyParser: false` and `parsers`). */
  parsers?: (app: INestApplication) => void;
  logger?: LoggerService;
  providers?: NonNullable<Parameters<typeof createTestApp>[0]['providers']>;
  controllers?: NonNullable<Parameters<typeof createTestApp>[0]['controllers']>;
  /** Point the demo account's webhooks at this host. Default true. */
  receiveWebhooks?: boolean;
}

/**
 * Module options every test starts from: the sandbox's clock, webhooks on, reconciler only on demand;
 * on the demo account unless the test gives an account of its own (its key, secret and webhook secret).
 */
export function moduleOptions(
  sb: VerificationSandbox,
  overrides: Partial<VerificationModuleOptions> = {},
  account: SandboxAccountCredentials = sb.demoAccount,
): VerificationModuleOptions {
  return {
    api: {
      baseUrl: sb.url,
      apiKey: account.apiKey,
      apiSecret: account.apiSecret,
      maxRetries: 0,
    },
    clock: () => sb.now(),
    limits: { enabled: false },
    owner: (req) => {
      const user = (req as { headers: Record<string, string | undefined> }).headers['x-user'];
      return user;
    },
    webhooks: { secret: account.webhookSecret },
    // Tests move the clock and call runOnce(); the real-time tick is out of the way.
    reconcile: { tickMs: 3_600_000 },
    ...overrides,
  };
}

export async function startHost(
  platform: Platform,
  sb: VerificationSandbox,
  options: HostOptions = {},
): Promise<TestApp> {
  const host = await createTestApp({
    platform,
    module: moduleOptions(sb, options.module),
    rawBody: options.rawBody,
    ...(options.parsers === undefined ? {} : { bodyParser: false, parsers: options.parsers }),
    logger: options.logger,
    providers: options.providers,
  });
  if (options.receiveWebhooks ?? true)
    await sb.updateAccount(sb.demoAccount.apiKey, { webhookUrl: `${host.url}/verification/webhooks` });
  return host;
}

/**
 * A host on an account of its own (balance 100 unless given; its webhook secret, no webhooks sent to
 * the host): its sessions, money and history stay apart from other tests'.
 */
export async function startAccountHost(
  platform: Platform,
  sb: VerificationSandbox,
  options: Omit<HostOptions, 'receiveWebhooks' | 'rawBody'> & { balance?: number; trustProxy?: boolean } = {},
): Promise<TestApp> {
  const account = await sb.createAccount({ balance: options.balance ?? 100 });
  return createTestApp({
    platform,
    trustProxy: options.trustProxy,
    module: moduleOptions(sb, options.module, account),
    logger: options.logger,
    providers: options.providers,
    controllers: options.controllers,
  });
}

export function reconcilerOf(host: TestApp): VerificationReconciler {
  return host.app.get(VerificationReconciler, { strict: false });
}

let phoneCounter = 0;
/** A fresh Russian mobile number per call (worker-unique enough: the sandbox is per suite). */
export function nextPhone(): string {
  phoneCounter += 1;
  return `+7912${String(1_000_000 + phoneCounter)
    .slice(1)
    .padStart(7, '0')}`;
}

export interface StartedSession {
  requestId: string;
  verificationId: string;
  phone: string;
  method: SandboxMethod;
  owner: string;
}

/** Starts a verification through the host's client route, as a frontend would. */
export async function startSession(
  host: TestApp,
  sb: VerificationSandbox,
  method: SandboxMethod,
  owner = 'user-1',
): Promise<StartedSession> {
  const phone = nextPhone();
  const res = await call(
    host.url,
    'POST',
    '/verification/start',
    { phone_number: phone, method },
    { 'x-user': owner },
  );
  if (res.status !== 201) throw new Error(`start ${method} answered ${res.status}: ${res.text}`);
  const requestId = sb.sessionsFor(phone)[0]!.request_id;
  return { requestId, verificationId: res.body.verification_id as string, phone, method, owner };
}

/** `POST /v1/verify` straight to the sandbox, as another integration on the same account would: its request id. */
export async function apiInitiate(sb: VerificationSandbox, phone: string, method: string): Promise<string> {
  const auth = Buffer.from(`${sb.demoAccount.apiKey}:${sb.demoAccount.apiSecret}`).toString('base64');
  const res = await fetch(`${sb.url}/v1/verify`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Basic ${auth}` },
    body: JSON.stringify({ phone_number: phone, method }),
  });
  const body = (await res.json()) as { request_id: string };
  if (res.status !== 201) throw new Error(`initiate answered ${res.status}`);
  return body.request_id;
}

/** `POST /v1/verify/check` straight to the sandbox (the host learns the result only by webhook or poll). */
export async function apiCheck(sb: VerificationSandbox, requestId: string, code: string): Promise<number> {
  const auth = Buffer.from(`${sb.demoAccount.apiKey}:${sb.demoAccount.apiSecret}`).toString('base64');
  const res = await fetch(`${sb.url}/v1/verify/check`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Basic ${auth}` },
    body: JSON.stringify({ request_id: requestId, code }),
  });
  await res.text();
  return res.status;
}

/** The user enters the code the sandbox sent: `POST /verification/check` on the host, as the session's owner. */
export function enterCode(
  host: TestApp,
  sb: VerificationSandbox,
  s: StartedSession,
): ReturnType<typeof call> {
  return call(
    host.url,
    'POST',
    '/verification/check',
    { verification_id: s.verificationId, code: sb.getSession(s.requestId)!.code },
    { 'x-user': s.owner },
  );
}

/** `GET /v1/verify/{id}` straight from the sandbox: the truth the events must match. */
export async function apiStatus(sb: VerificationSandbox, requestId: string): Promise<string> {
  const auth = Buffer.from(`${sb.demoAccount.apiKey}:${sb.demoAccount.apiSecret}`).toString('base64');
  const res = await fetch(`${sb.url}/v1/verify/${requestId}`, {
    headers: { authorization: `Basic ${auth}` },
  });
  return ((await res.json()) as { status: string }).status;
}

function codeOf(sb: VerificationSandbox, requestId: string): string {
  const code = sb.getSession(requestId)?.code;
  if (typeof code !== 'string') throw new Error(`no code issued for ${requestId}`);
  return code;
}

function wrongCode(code: string): string {
  const wrong = '0'.repeat(code.length);
  return wrong === code ? '1'.repeat(code.length) : wrong;
}

/** Gets the code to the user: delivery, the bot share, or the operator's SMS fallback. */
export async function sendCode(sb: VerificationSandbox, s: StartedSession): Promise<void> {
  if (s.method === 'msgr2_bot') await sb.share(s.requestId, s.phone);
  else if (s.method === 'operator_id') await sb.operator(s.requestId, 'fallback');
  else await sb.deliver(s.requestId);
}

/**
 * Plays the end user to `outcome`: verified (the right code, the call, the operator's approval),
 * failed (wrong codes until none are left, or the operator failing) or expired (the clock moves past
 * the TTL). operator_id with `viaFallback` goes through the SMS code (code_required, then verified).
 */
export async function drive(
  sb: VerificationSandbox,
  s: StartedSession,
  outcome: Outcome,
  options: {
    viaFallback?: boolean;
    /** Let the code_required webhook land before the code is typed. Default true. */ readFirst?: boolean;
  } = {},
): Promise<void> {
  if (outcome === 'expired') {
    const expiresAt = Date.parse(sb.getSession(s.requestId)!.expires_at);
    await sb.advance(Math.max(0, expiresAt - sb.now()) + 1);
    return;
  }
  if (s.method === 'reverse_flash_call') {
    if (outcome !== 'verified') throw new Error('reverse_flash_call can only be verified or expire');
    await sb.call(s.requestId, s.phone);
    return;
  }
  if (s.method === 'operator_id' && !options.viaFallback) {
    await sb.operator(s.requestId, outcome === 'verified' ? 'approve' : 'fail');
    return;
  }
  await sendCode(sb, s);
  // The user reads the code after it arrived; the code_required webhook went out with it.
  if (s.method === 'operator_id' && options.readFirst !== false) await settle(sb);
  const code = codeOf(sb, s.requestId);
  if (outcome === 'verified') {
    await apiCheck(sb, s.requestId, code);
    // operator_id: the operator's result follows the accepted code after a moment of sandbox time.
    if (s.method === 'operator_id') await sb.advance(1000);
    return;
  }
  while (sb.getSession(s.requestId)!.status !== 'failed') await apiCheck(sb, s.requestId, wrongCode(code));
}

/** Waits until no webhook delivery is in flight (each delivery's answer means the host finished it). */
export async function settle(sb: VerificationSandbox): Promise<void> {
  await sb.webhooksIdle();
}

/**
 * The sandbox's sessions of `phone` once it holds `count` of them (an initiation answered too late is
 * created upstream a moment after the module gave up), waiting up to 5 s of real time.
 */
export async function upstreamSessions(
  sb: VerificationSandbox,
  phone: string,
  count: number,
): Promise<ReturnType<VerificationSandbox['sessionsFor']>> {
  // A bound on waiting, not a pace: a start held by a latency fault lands seconds late on a loaded machine.
  const until = Date.now() + 15_000;
  while (sb.sessionsFor(phone).length < count && Date.now() < until)
    await new Promise((r) => setTimeout(r, 20));
  return sb.sessionsFor(phone);
}

/** The event names the host received for one session, in order. */
export function eventsOf(host: TestApp, requestId: string): string[] {
  return host.events.filter((e) => e.requestId === requestId).map((e) => e.event);
}

export function lastEventOf(host: TestApp, requestId: string): VerificationEvent | undefined {
  return host.events.filter((e) => e.requestId === requestId).at(-1);
}

/** Every (method, outcome) pair the sandbox can produce. */
export const OUTCOMES: { method: SandboxMethod; outcome: Outcome }[] = METHODS.flatMap((method) =>
  (['verified', 'failed', 'expired'] as Outcome[])
    .filter((outcome) => !(method === 'reverse_flash_call' && outcome === 'failed'))
    .map((outcome) => ({ method, outcome })),
);

/** Signs `body` as the sandbox would (with the standardwebhooks package), for hand-made deliveries. */
export function signed(
  secret: string,
  body: unknown,
  options: { id?: string; timestampSeconds?: number } = {},
): { headers: Record<string, string>; body: string } {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  const id = options.id ?? `msg_${Math.random().toString(36).slice(2)}`;
  const timestampSeconds = options.timestampSeconds ?? Math.floor(Date.now() / 1000);
  return {
    headers: {
      'content-type': 'application/json',
      'webhook-id': id,
      'webhook-timestamp': String(timestampSeconds),
      'webhook-signature': new Webhook(secret).sign(id, new Date(timestampSeconds * 1000), text),
    },
    body: text,
  };
}

/** The sandbox's payload shape for an event of a session. */
export function payloadFor(event: string, requestId: string, extra: Record<string, unknown> = {}): unknown {
  return { type: event, timestamp: new Date().toISOString(), data: { request_id: requestId, ...extra } };
}

/** POSTs a hand-made delivery to the host's webhook route. */
export async function postWebhook(
  url: string,
  delivery: { headers: Record<string, string>; body: string },
): Promise<{
  status: number;
  contentType: string | null;
  retryAfter: string | null;
  body: Record<string, unknown>;
}> {
  const res = await fetch(url, { method: 'POST', headers: delivery.headers, body: delivery.body });
  const text = await res.text();
  return {
    status: res.status,
    contentType: res.headers.get('content-type'),
    retryAfter: res.headers.get('retry-after'),
    body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
  };
}

/** A LoggerService that keeps every line, to assert on what the operator would read. */
export class CapturingLogger implements LoggerService {
  readonly lines: { level: string; message: string }[] = [];
  log(message: unknown): void {
    this.lines.push({ level: 'log', message: String(message) });
  }
  error(message: unknown): void {
    this.lines.push({ level: 'error', message: String(message) });
  }
  warn(message: unknown): void {
    this.lines.push({ level: 'warn', message: String(message) });
  }
  debug(message: unknown): void {
    this.lines.push({ level: 'debug', message: String(message) });
  }
  verbose(message: unknown): void {
    this.lines.push({ level: 'verbose', message: String(message) });
  }
  at(level: string): string[] {
    return this.lines.filter((l) => l.level === level).map((l) => l.message);
  }
}
