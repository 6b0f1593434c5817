import type { DeviceHint } from './device-hint.js';
import { VerificationClientError } from './errors.js';
import type { StartInput, VerificationClientOptions } from './client-options.js';
import {
  afterCancelRefusal,
  afterCheckRefusal,
  afterSwitchRefusal,
  answered,
  countdownsMoved,
  counting,
  dateMs,
  IDLE,
  overExpiryMs,
  stepKey,
  waitUntil,
  withCountdowns,
} from './client-state.js';
import { StatusFollower } from './status-follower.js';
import { FollowedVerification, SavedVerificationSlot, type SavedVerification } from './storage.js';
import { routesFor, tokenQuery, type EventSourceFactory, type RoutesTransport } from './transport.js';
import type { StartAnswer, StatusAnswer, VerificationState } from './types.js';
import { isTerminal } from './user-prompt.js';
import { WebOtpWatcher } from './web-otp.js';
import { Ticker } from './ticker.js';

export type { StartInput, VerificationClientOptions } from './client-options.js';

/** What `subscribe` calls with each new state. */
export type VerificationStateListener = (state: VerificationState) => void;

/** Past the expiry by this much with no word from the server, the verification is taken as expired. */
const EXPIRY_GRACE_MS = 5000;
const TICK_MS = 250;

/**
 * A verification as a small state machine over the client routes:
 * `idle → starting → awaiting_user → verifying → verified | failed | expired | canceled`; a switch
 * to another method goes back to `awaiting_user` with the same `verificationId`.
 * Calls never throw for a refusal: it lands in `state.error`.
 */
export class VerificationClient {
  private state: VerificationState = IDLE;
  private readonly listeners = new Set<VerificationStateListener>();
  private readonly transport: RoutesTransport;
  private readonly followed: FollowedVerification;
  private readonly eventSource: EventSourceFactory | null;
  private controller = new AbortController();
  private follower: StatusFollower | null = null;
  private readonly ticker = new Ticker(() => this.tick(), TICK_MS);
  private readonly otp = new WebOtpWatcher((code) => void this.check(code));
  private codeAccepted = false;
  private switching: Promise<VerificationState> | null = null;
  /** The step `autoFallback` last switched from. */
  private autoSwitchedAt: string | null = null;
  private device: DeviceHint | undefined;
  /** The last start's purpose: a resend keeps it. */
  private purpose: string | undefined;

  constructor(private readonly options: VerificationClientOptions = {}) {
    ({ transport: this.transport, eventSource: this.eventSource } = routesFor(options));
    this.followed = new FollowedVerification(new SavedVerificationSlot(options.storage, options.storageKey));
  }

  getState = (): VerificationState => this.state;

  subscribe = (listener: VerificationStateListener): (() => void) => {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  };

  /** The server's clock (ms since the epoch), as the countdowns use it. */
  now(): number {
    return this.transport.now();
  }

  async start(input: StartInput): Promise<VerificationState> {
    if (this.waiting()) return this.state;
    const signal = this.restart();
    this.device = input.device;
    this.purpose = input.purpose;
    this.set({ ...IDLE, phase: 'starting', method: input.method ?? null });
    try {
      const answer = await this.transport.start(input, signal);
      if (!signal.aborted) this.follow(answer, answer.phone_number, answer.resumed, signal);
    } catch (error) {
      this.refused(error, signal, { ...IDLE, method: input.method ?? null });
    }
    return this.state;
  }

  /** Picks up the verification a reload left, if any. Resolves true when one was resumed. */
  async resume(): Promise<boolean> {
    const saved = this.followed.slot.read();
    if (!saved) return false;
    // Followed as kept while its status is read: a cancel meanwhile carries its journey token.
    const signal = this.restart(saved);
    this.set({ ...IDLE, phase: 'starting', method: saved.method, verificationId: saved.id, resumed: true });
    try {
      const answer = await this.transport.status(saved.id, saved.token, signal);
      if (signal.aborted) return false;
      if (isTerminal(answer.status)) this.followed.slot.clear();
      else this.follow(answer, saved.phone, true, signal, saved.token);
      this.set({ ...this.state, phase: isTerminal(answer.status) ? 'idle' : this.state.phase });
      return !isTerminal(answer.status);
    } catch (error) {
      if ((error as VerificationClientError).code === 'not_found') this.followed.slot.clear();
      this.refused(error, signal, IDLE);
      return false;
    }
  }

  async check(code: string): Promise<VerificationState> {
    const { phase, prompt, verificationId } = this.state;
    if (phase !== 'awaiting_user' || prompt?.kind !== 'code' || !verificationId)
      return this.local('no_verification');
    if (this.waiting()) return this.state;
    const signal = this.controller.signal;
    this.set({ ...this.state, phase: 'verifying', error: null, retryInMs: null });
    try {
      const answer = await this.transport.check(verificationId, code, this.followed.current?.token, signal);
      if (signal.aborted) return this.state;
      if (answer.verified) this.finish({ ...this.state, phase: 'verified', status: answer.status });
      else {
        // operator_id: the operator accepted the code; its verdict comes by status.
        this.codeAccepted = true;
        this.set({ ...this.state, phase: 'verifying', status: answer.status, prompt: null });
      }
    } catch (error) {
      const refusal = error as VerificationClientError;
      this.refused(error, signal, afterCheckRefusal(this.state, refusal));
      // The session moved on: the server says what it became.
      if (refusal.code === 'not_pending') this.follower?.refresh();
    }
    return this.state;
  }

  /** A new code (a new start for the same number and method), once `canResend`. */
  async resend(): Promise<VerificationState> {
    const saved = this.followed.current;
    if (!saved?.phone || !this.state.canResend) return this.local('resend_unavailable');
    return this.start({
      phoneNumber: saved.phone,
      method: saved.method,
      device: this.device,
      purpose: this.purpose,
    });
  }

  /**
   * Another way for the same verification: the next method of the server's policy, or `method` (one
   * of `switchMethods`). The state moves to the new method's task; on a refusal the current method
   * goes on (`journey_limit_reached` empties `switchMethods`, `fallback_not_available` moves
   * `fallbackAvailableAt`). A second call while one is under way waits for it rather than switching twice.
   */
  switchMethod(method?: string): Promise<VerificationState> {
    return (this.switching ??= this.switchNow(method).finally(() => (this.switching = null)));
  }

  private async switchNow(method: string | undefined): Promise<VerificationState> {
    const { phase, verificationId } = this.state;
    if (!verificationId || !(phase === 'awaiting_user' || phase === 'verifying' || this.state.canSwitch))
      return this.local('no_verification');
    if (this.waiting()) return this.state;
    const signal = this.controller.signal;
    try {
      const answer = await this.transport.switch(
        verificationId,
        method,
        this.followed.current?.token,
        signal,
      );
      if (signal.aborted) return this.state;
      this.follower?.stop();
      this.follower = null;
      this.codeAccepted = false;
      this.state = { ...this.state, error: null, attemptsRemaining: null, resumed: false };
      this.follow(answer, this.followed.current?.phone ?? '', false, signal);
    } catch (error) {
      this.refused(error, signal, afterSwitchRefusal(this.state, error as VerificationClientError));
      // switch_in_progress: another tab moved it on; not_pending: it ended. The status says which.
      this.follower?.refresh();
    }
    return this.state;
  }

  /**
   * Ends the verification: stops following and forgets it here at once, then asks the server to
   * cancel it (`POST /cancel`), so that nothing more is charged for it. When that call fails (no
   * network, a server without the route) the local stop stands and the refusal is in `state.error`;
   * the upstream session then runs out on its own. Verified meanwhile: the state says `verified`.
   */
  async cancel(): Promise<VerificationState> {
    const { method, phoneNumber, verificationId, phase, canSwitch } = this.state;
    const live = phase === 'starting' || phase === 'awaiting_user' || phase === 'verifying' || canSwitch;
    const token = this.followed.current?.token;
    this.restart();
    const mine = this.controller;
    this.followed.slot.clear();
    this.set({ ...IDLE, phase: 'canceled', method, phoneNumber });
    if (!verificationId || !live) return this.state;
    try {
      await this.transport.cancel(verificationId, token);
    } catch (error) {
      const after = afterCancelRefusal(this.state, error as VerificationClientError, verificationId);
      if (this.controller === mine && after) this.set(after);
    }
    return this.state;
  }

  /** Back to `idle` (after an outcome, to start afresh). */
  reset(): void {
    this.restart();
    this.followed.slot.clear();
    this.set(IDLE);
  }

  /** Reads the status once now, stream or not (e.g. the page learnt that the server's clock moved). */
  refresh(): void {
    this.tick();
    this.follower?.refresh();
  }

  /** Aborts everything in flight and stops timers; the saved verification stays for `resume()`. */
  dispose(): void {
    this.restart();
    this.set(IDLE);
  }

  private restart(resumed?: SavedVerification): AbortSignal {
    this.controller.abort();
    this.controller = new AbortController();
    this.follower?.stop();
    this.follower = null;
    this.followed.drop(resumed);
    this.codeAccepted = false;
    return this.controller.signal;
  }

  private follow(
    answer: StartAnswer | StatusAnswer,
    phone: string,
    resumed: boolean,
    signal: AbortSignal,
    heldToken?: string,
  ): void {
    this.followed.follow(answer, phone, heldToken);
    this.apply(answer, {
      resumed,
      // The number as typed and normalised (kept for a reload); the status route only has it masked.
      phoneNumber: phone || answer.phone_number,
      resendAvailableAt:
        'resend_available_at' in answer ? dateMs(answer.resend_available_at) : this.state.resendAvailableAt,
    });
    if (isTerminal(answer.status)) return;
    this.follower = new StatusFollower(
      this.transport,
      answer.verification_id,
      answer.poll_interval_ms,
      signal,
      {
        onStatus: (status) => this.apply(status, {}),
        onLost: (error) => this.finish({ ...this.state, phase: 'failed', error, switchMethods: [] }),
        onConnection: (connection) => this.set({ ...this.state, connection }),
      },
      this.options.random ?? Math.random,
      () => tokenQuery(this.followed.current?.token),
    );
    this.follower.start(this.eventSource);
  }

  private apply(answer: StatusAnswer, extra: Partial<VerificationState>): void {
    // Another tab switched the method: a reload and a resend go on with the new one.
    if (this.followed.moved(answer)) this.codeAccepted = false;
    const next = answered(this.state, answer, extra, this.codeAccepted);
    if (isTerminal(answer.status)) this.finish(next);
    else this.set(next);
  }

  private finish(state: VerificationState): void {
    this.follower?.stop();
    this.follower = null;
    this.followed.slot.clear();
    this.set({ ...state, prompt: null, connection: null });
  }

  private refused(error: unknown, signal: AbortSignal, state: VerificationState): void {
    if (signal.aborted) return;
    const refusal =
      error instanceof VerificationClientError
        ? error
        : new VerificationClientError('unexpected_response', 0, {}, null, this.now());
    if (state.phase === 'failed') this.finish({ ...state, error: refusal });
    else this.set({ ...state, error: refusal });
  }

  private local(code: string): VerificationState {
    this.set({ ...this.state, error: new VerificationClientError(code, 0, {}, null, this.now()) });
    return this.state;
  }

  /** A rate limit's `Retry-After` wait is running: a call now would only be refused again. */
  private waiting(): boolean {
    const until = waitUntil(this.state.error);
    return until !== null && until > this.now();
  }

  private set(state: VerificationState): void {
    this.state = this.withCountdowns(state);
    this.watchCode();
    this.ticker.run(counting(this.state));
    for (const listener of [...this.listeners]) listener(this.state);
    this.fallBackByItself();
  }

  /** `autoFallback`: the switch the user would ask for, once per step (a refused one is not retried). */
  private fallBackByItself(): void {
    const step = this.state.canSwitch ? stepKey(this.state) : null;
    if (!this.options.autoFallback || !step || this.switching || this.autoSwitchedAt === step) return;
    this.autoSwitchedAt = step;
    void this.switchMethod();
  }

  private withCountdowns(state: VerificationState): VerificationState {
    return withCountdowns(state, this.now(), !!this.followed.current?.phone);
  }

  private tick(): void {
    const before = this.state;
    const next = this.withCountdowns(before);
    const over = overExpiryMs(next, this.now());
    if (over >= EXPIRY_GRACE_MS) return this.finish({ ...next, phase: 'expired', status: 'expired' });
    // One read at the expiry, on the first tick past it (the countdown shows 0 from half a second before,
    // so it cannot say when; a tick a throttled tab delays past this one reads at the next poll instead).
    if (over >= 0 && over < TICK_MS) this.follower?.pollNow();
    if (countdownsMoved(before, next)) this.set(next);
  }

  /** WebOTP runs while a code is awaited, and is aborted as soon as it no longer is. */
  private watchCode(): void {
    this.otp.watch(
      this.options.webOtp !== false &&
        this.state.phase === 'awaiting_user' &&
        this.state.prompt?.kind === 'code',
    );
  }
}
