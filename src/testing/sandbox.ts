import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import {
  SandboxAccounts,
  credentialsOf,
  toAccountView,
  type SandboxAccountView,
} from './sandbox-accounts.js';
import { SandboxTransitions } from './sandbox-transitions.js';
import { SandboxClock } from './sandbox-clock.js';
import type { SandboxContext } from './sandbox-context.js';
import { SandboxFaults, type SandboxFaultInput } from './sandbox-faults.js';
import { SandboxRequestCounts } from './sandbox-request-counts.js';
import { SandboxScheduler } from './sandbox-scheduler.js';
import { createSandboxServer } from './sandbox-server.js';
import { toControlView, type SandboxSessionView } from './sandbox-session.js';
import { SandboxState, type ControlActionResult } from './sandbox-state.js';
import { toUserPlanView, type SandboxUserPlanView } from './sandbox-users.js';
import type { SandboxDevice } from './sandbox-population.js';
import { SandboxWebhooks, type WebhookDelivery } from './sandbox-webhooks.js';
import {
  resolveSandboxOptions,
  type OperatorOutcome,
  type SandboxAccountCredentials,
  type SandboxAccountInput,
  type SandboxOptions,
} from './sandbox.options.js';

/** The demo account's API key unless `demoAccount.apiKey` says otherwise. */
export const DEMO_API_KEY = 'demo_key';

/**
 * A spec-faithful fake of the verification API, in-process (`VerificationSandbox.start`) or behind the
 * `phone-verification-sandbox` CLI. Its clock is virtual: `advance` moves it and fires everything due.
 */
export class VerificationSandbox {
  /** Base URL, no trailing slash and no `/v1`, e.g. `http://127.0.0.1:4010`. */
  readonly url: string;
  /** The demo account's credentials (random secrets unless given). */
  readonly demoAccount: SandboxAccountCredentials;

  private readonly timer: NodeJS.Timeout;
  private closed = false;

  private constructor(
    private readonly ctx: SandboxContext,
    private readonly server: Server,
    url: string,
    demoAccount: SandboxAccountCredentials,
  ) {
    this.url = url;
    this.demoAccount = demoAccount;
    // One background timer processes due work as real time passes; unref'd so it never keeps a process alive.
    this.timer = setInterval(() => ctx.scheduler.runDue(), ctx.options.tickMs);
    this.timer.unref();
  }

  static async start(options: SandboxOptions = {}): Promise<VerificationSandbox> {
    const resolved = resolveSandboxOptions(options);
    const clock = new SandboxClock(resolved.freezeClock);
    const scheduler = new SandboxScheduler(clock);
    const faults = new SandboxFaults();
    const webhooks = new SandboxWebhooks(resolved, clock, scheduler, faults);
    const accounts = new SandboxAccounts();
    const transitions = new SandboxTransitions(accounts, clock, webhooks);
    const state = new SandboxState(resolved, clock, scheduler, accounts, transitions);
    const ctx: SandboxContext = {
      options: resolved,
      clock,
      scheduler,
      state,
      webhooks,
      faults,
      counts: new SandboxRequestCounts(),
      advance: (ms) => {
        clock.moveForward(ms);
        scheduler.runDue();
      },
    };
    const demo = state.createAccount({ apiKey: DEMO_API_KEY, ...resolved.demoAccount });
    const server = createSandboxServer(ctx);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(resolved.port, resolved.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const { port } = server.address() as AddressInfo;
    const host = resolved.host.includes(':') ? `[${resolved.host}]` : resolved.host;
    return new VerificationSandbox(ctx, server, `http://${host}:${port}`, credentialsOf(demo));
  }

  /** Creates an account; random secrets unless given. */
  async createAccount(input: SandboxAccountInput = {}): Promise<SandboxAccountCredentials> {
    return credentialsOf(this.ctx.state.createAccount(input));
  }

  async updateAccount(apiKey: string, patch: SandboxAccountInput): Promise<SandboxAccountCredentials> {
    return credentialsOf(this.ctx.state.accounts.update(apiKey, patch));
  }

  /** An account as the control API shows it (balance etc.), or undefined. */
  getAccount(apiKey: string): SandboxAccountView | undefined {
    const account = this.ctx.state.accounts.get(apiKey);
    return account && toAccountView(account);
  }

  /** Virtual clock, ms since the epoch. */
  now(): number {
    return this.ctx.clock.now();
  }

  /** Moves the clock forward and processes everything due by then (TTL expiry, deliveries, retries). */
  async advance(ms: number): Promise<void> {
    this.ctx.advance(ms);
  }

  getSession(requestId: string): SandboxSessionView | undefined {
    const session = this.ctx.state.get(requestId.toLowerCase());
    return session && toControlView(session);
  }

  /** A session's simulated user (as `GET /_sandbox/sessions/:id/user`), or undefined without one. */
  userPlan(requestId: string): SandboxUserPlanView | undefined {
    const session = this.ctx.state.get(requestId.toLowerCase());
    return session?.user ? toUserPlanView(session, session.user) : undefined;
  }

  /** Declares a phone number's device for sessions started from now on (null: the population draws it). */
  async setDevice(phoneNumber: string, device: SandboxDevice | null): Promise<void> {
    this.ctx.state.users.declare(phoneNumber, device);
  }

  /** Sessions of a phone number, newest first (what the end user's phone would show). */
  sessionsFor(phoneNumber: string): SandboxSessionView[] {
    return this.ctx.state.forPhone(phoneNumber).map(toControlView);
  }

  /** Control: the code or call goes out (sms, flash_call, msgr1_otp). */
  async deliver(requestId: string): Promise<ControlActionResult> {
    return this.act(() => this.ctx.state.deliver(requestId));
  }

  /** Control: the user shares `phoneNumber` in the msgr2 bot. */
  async share(requestId: string, phoneNumber: string): Promise<ControlActionResult> {
    return this.act(() => this.ctx.state.share(requestId, phoneNumber));
  }

  /** Control: a reverse flash call from caller ID `from`. */
  async call(requestId: string, from: string): Promise<ControlActionResult> {
    return this.act(() => this.ctx.state.call(requestId, from));
  }

  /** Control: the operator's push outcome for an operator_id session. */
  async operator(requestId: string, outcome: OperatorOutcome): Promise<ControlActionResult> {
    return this.act(() => this.ctx.state.operator(requestId, outcome));
  }

  /** Control: a terminal error on the service side; the session fails (no charge for deferred-charge methods). */
  async fail(requestId: string): Promise<ControlActionResult> {
    return this.act(() => this.ctx.state.failSession(requestId));
  }

  /** Control: the service recalculates a charged session; its debit becomes `amount` RUB (0: credited back). */
  async recalculate(requestId: string, amount: number): Promise<ControlActionResult> {
    return this.act(() => this.ctx.state.recalculate(requestId, amount));
  }

  /** API requests received for a route key, or the total without one. */
  requestCount(route?: string): number {
    return this.ctx.counts.count(route);
  }

  resetRequestCounts(): void {
    this.ctx.counts.reset();
  }

  /** Same bodies as `POST /_sandbox/faults`. */
  addFault(fault: SandboxFaultInput): void {
    this.ctx.faults.add(fault);
  }

  clearFaults(): void {
    this.ctx.faults.clear();
  }

  /** Every webhook delivery attempt, oldest first. */
  webhookLog(): WebhookDelivery[] {
    return this.ctx.webhooks.deliveries();
  }

  /** Resolves once no webhook delivery is in flight (attempts due later on the clock excluded). */
  async webhooksIdle(): Promise<void> {
    await this.ctx.webhooks.idle();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    this.ctx.scheduler.clear();
    this.ctx.webhooks.close();
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  private act(action: () => ControlActionResult): ControlActionResult {
    this.ctx.scheduler.runDue();
    return action();
  }
}
