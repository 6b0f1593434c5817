import type { SandboxDevice, SandboxPopulation } from './sandbox-population.js';
import {
  camelKeys,
  camelPopulation,
  snakeKeys,
  snakePopulation,
  type SandboxControlAccount,
  type SandboxControlActionResult,
  type SandboxControlClock,
  type SandboxControlFault,
  type SandboxControlSession,
  type SandboxControlUserDevice,
  type SandboxControlUserPlan,
  type SandboxControlWebhookDelivery,
} from './sandbox-control.types.js';
import type { OperatorOutcome, SandboxAccountInput } from './sandbox.options.js';
import { PhoneVerificationError } from '../core/phone-verification.error.js';

/** What the client needs of `fetch`: Node's global one, or any compatible one (e.g. undici's with an agent). */
export type SandboxControlFetch = (
  url: string,
  init: { method: string; headers: Record<string, string>; body?: string },
) => Promise<{ status: number; ok: boolean; text(): Promise<string> }>;

export interface SandboxControlClientOptions {
  /** Default: the global `fetch`. */
  fetch?: SandboxControlFetch;
}

/**
 * A control request the sandbox refused (or answered with something that is not JSON): the HTTP status and
 * the problem's `error_code`, e.g. 404 `not_found` for an unknown request id, 409 `not_applicable` for an
 * action the session's method does not take, 400 `validation_error` for a bad body.
 */
export class SandboxControlError extends PhoneVerificationError {
  constructor(
    readonly status: number,
    readonly errorCode: string | undefined,
    readonly detail: string,
    /** The problem document as received (snake_case, as on the wire), when there was one. */
    readonly problem?: Record<string, unknown>,
  ) {
    super(`sandbox control answered ${status}${errorCode ? ` ${errorCode}` : ''}: ${detail}`);
    this.name = 'SandboxControlError';
  }
}

/**
 * The sandbox's control API (`/_sandbox`) over HTTP, for a sandbox in another process (`npx
 * phone-verification-sandbox`) as well as an in-process one (`sb.url`): plays the end user's phone and the
 * world. No credentials: the control API has none. Every method is one request; none is retried.
 */
export class SandboxControlClient {
  private readonly baseUrl: string;
  private readonly send: SandboxControlFetch;

  /** `sandboxUrl`: the sandbox's base URL as the CLI prints it (or `sb.url`), without `/_sandbox`. */
  constructor(sandboxUrl: string, options: SandboxControlClientOptions = {}) {
    this.baseUrl = `${sandboxUrl.replace(/\/+$/, '')}/_sandbox`;
    this.send = options.fetch ?? ((url, init) => fetch(url, init));
  }

  /** `POST /_sandbox/accounts`: a new account; random key and secrets unless given. No auto-delivery unless asked. */
  async createAccount(input: SandboxAccountInput = {}): Promise<SandboxControlAccount> {
    return accountFromWire(await this.request('POST', '/accounts', accountToWire(input)));
  }

  /** `GET /_sandbox/accounts/:api_key`: an account's settings and balance. */
  async getAccount(apiKey: string): Promise<SandboxControlAccount> {
    return accountFromWire(await this.request('GET', `/accounts/${encodeURIComponent(apiKey)}`));
  }

  /** `PATCH /_sandbox/accounts/:api_key`: changes the given settings (a bad field changes nothing). */
  async updateAccount(apiKey: string, patch: SandboxAccountInput): Promise<SandboxControlAccount> {
    return accountFromWire(
      await this.request('PATCH', `/accounts/${encodeURIComponent(apiKey)}`, accountToWire(patch)),
    );
  }

  /**
   * `PATCH /_sandbox/accounts/:api_key` with `population`: the account's simulated end users from now on
   * (sessions already started keep theirs); null turns them off. A bad knob is a 400 and changes nothing.
   */
  async setPopulation(apiKey: string, population: SandboxPopulation | null): Promise<SandboxControlAccount> {
    return this.updateAccount(apiKey, { population });
  }

  /** `GET …/user`: the session's simulated user, to act out its code entry. 409 `not_applicable` without one. */
  async userPlan(requestId: string): Promise<SandboxControlUserPlan> {
    return camelKeys(await this.request('GET', `${this.sessionPath(requestId)}/user`));
  }

  /** `PUT /_sandbox/users/:phone_number`: declares the user's device for sessions started from now on (null: drawn). */
  async setDevice(phoneNumber: string, device: SandboxDevice | null): Promise<SandboxControlUserDevice> {
    return camelKeys(await this.request('PUT', `/users/${encodeURIComponent(phoneNumber)}`, { device }));
  }

  /** `GET /_sandbox/sessions/:request_id`: the session with its code, incoming number, attempts, cost. */
  async getSession(requestId: string): Promise<SandboxControlSession> {
    return camelKeys(await this.request('GET', this.sessionPath(requestId)));
  }

  /** `GET /_sandbox/sessions?phone_number=`: a phone number's sessions across accounts, newest first. */
  async sessionsFor(phoneNumber: string): Promise<SandboxControlSession[]> {
    const body = await this.request<{ sessions: unknown[] }>(
      'GET',
      `/sessions?phone_number=${encodeURIComponent(phoneNumber)}`,
    );
    return body.sessions.map((session) => camelKeys<SandboxControlSession>(session));
  }

  /** `POST …/deliver`: the code or call goes out (sms, flash_call, msgr1_otp). */
  async deliver(requestId: string): Promise<SandboxControlActionResult> {
    return this.act(requestId, 'deliver');
  }

  /** `POST …/share`: the user shares `phoneNumber` in the msgr2 bot; only the verified number gets a code. */
  async share(requestId: string, phoneNumber: string): Promise<SandboxControlActionResult> {
    return this.act(requestId, 'share', { phone_number: phoneNumber });
  }

  /** `POST …/call`: a reverse flash call from caller ID `from` to the session's number to call. */
  async call(requestId: string, from: string): Promise<SandboxControlActionResult> {
    return this.act(requestId, 'call', { from });
  }

  /** `POST …/operator`: the subscriber approves (`approve`) or denies (`fail`) the operator push, or it times out or falls back to SMS. */
  async operator(requestId: string, outcome: OperatorOutcome): Promise<SandboxControlActionResult> {
    return this.act(requestId, 'operator', { outcome });
  }

  /** `POST …/fail`: a terminal error on the service side; the session fails. */
  async fail(requestId: string): Promise<SandboxControlActionResult> {
    return this.act(requestId, 'fail');
  }

  /** `POST …/recalculate`: the service recalculates a charged session; its debit becomes `amount` RUB. */
  async recalculate(requestId: string, amount: number): Promise<SandboxControlActionResult> {
    return this.act(requestId, 'recalculate', { amount });
  }

  /** `GET /_sandbox/clock`: the sandbox clock. */
  async clock(): Promise<SandboxControlClock> {
    return camelKeys(await this.request('GET', '/clock'));
  }

  /** `POST /_sandbox/clock`: moves the clock forward by `ms` and processes everything due by then. */
  async advance(ms: number): Promise<SandboxControlClock> {
    return camelKeys(await this.request('POST', '/clock', { advance_ms: ms }));
  }

  /** `POST /_sandbox/faults`: a route fault, or webhook faults merged into the current ones. */
  async addFault(fault: SandboxControlFault): Promise<void> {
    const body = 'webhooks' in fault ? { webhooks: snakeKeys(fault.webhooks) } : snakeKeys(fault);
    await this.request('POST', '/faults', body);
  }

  /** `DELETE /_sandbox/faults`: every route and webhook fault. */
  async clearFaults(): Promise<void> {
    await this.request('DELETE', '/faults');
  }

  /** `GET /_sandbox/webhooks`: every delivery attempt, oldest first; one session's with `requestId`. */
  async webhookLog(requestId?: string): Promise<SandboxControlWebhookDelivery[]> {
    const query = requestId === undefined ? '' : `?request_id=${encodeURIComponent(requestId)}`;
    const body = await this.request<{ deliveries: unknown[] }>('GET', `/webhooks${query}`);
    return body.deliveries.map((delivery) => camelKeys<SandboxControlWebhookDelivery>(delivery));
  }

  /** `GET /_sandbox/requests`: API requests received, by route key (`POST /v1/verify`, ...). */
  async requestCounts(): Promise<Record<string, number>> {
    return (await this.request<{ counts: Record<string, number> }>('GET', '/requests')).counts;
  }

  /** `DELETE /_sandbox/requests`: sets every request count back to zero. */
  async resetRequestCounts(): Promise<void> {
    await this.request('DELETE', '/requests');
  }

  private sessionPath(requestId: string): string {
    return `/sessions/${encodeURIComponent(requestId)}`;
  }

  private async act(
    requestId: string,
    action: 'deliver' | 'share' | 'call' | 'operator' | 'fail' | 'recalculate',
    body?: Record<string, unknown>,
  ): Promise<SandboxControlActionResult> {
    return camelKeys(await this.request('POST', `${this.sessionPath(requestId)}/${action}`, body));
  }

  private async request<T = unknown>(method: string, path: string, body?: object): Promise<T> {
    const res = await this.send(`${this.baseUrl}${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      throw new SandboxControlError(res.status, undefined, `${method} ${path}: the answer is not JSON`);
    }
    if (!res.ok) throw problemError(res.status, method, path, parsed);
    return parsed as T;
  }
}

function accountToWire(input: SandboxAccountInput): Record<string, unknown> {
  const wire = snakeKeys(input);
  if (input.population) wire.population = snakePopulation(input.population);
  return wire;
}

function accountFromWire(wire: unknown): SandboxControlAccount {
  const account = camelKeys<SandboxControlAccount>(wire);
  return { ...account, population: account.population && camelPopulation(account.population) };
}

function problemError(status: number, method: string, path: string, body: unknown): SandboxControlError {
  const problem =
    typeof body === 'object' && body !== null && !Array.isArray(body)
      ? (body as Record<string, unknown>)
      : undefined;
  const errorCode = typeof problem?.error_code === 'string' ? problem.error_code : undefined;
  const detail = typeof problem?.detail === 'string' ? problem.detail : `${method} ${path}`;
  return new SandboxControlError(status, errorCode, detail, problem);
}
