import type { DeviceHint } from './device-hint.js';
import { VerificationClientError } from './errors.js';
import type { StartInput, VerificationClientOptions } from './client-options.js';
import { dateMs, IDLE, waitUntil, withCountdowns } from './client-state.js';
import { StatusFollower } from './status-follower.js';
import { fetchEventSource } from './fetch-event-source.js';
import { defaultStorage, SavedVerificationSlot, type SavedVerification } from './storage.js';
import { browser, RoutesTransport, type EventSourceFactory } from './transport.js';
import type { CancelAnswer, CheckAnswer, StartAnswer, StatusAnswer, VerificationState } from './types.js';
import { isTerminal, phaseOf } from './user-prompt.js';
import { receiveSmsCode } from './web-otp.js';

export type { StartInput, VerificationClientOptions } from './client-options.js';

/** What `subscribe` calls with each new state. */
export type VerificationStateListener = (state: VerificationState) => void;

/** The journey token as the GET routes take it (`?journey_token=`), or nothing before a switch. */
function tokenQuery(token: string | undefined): string {
  return token ? `?journey_token=${encodeURIComponent(token)}` : '';
}

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
  private readonly slot: SavedVerificationSlot;
  private readonly eventSource: EventSourceFactory | null;
  private controller = new AbortController();
  private follower: StatusFollower | null = null;
  private ticker: ReturnType<typeof setInterval> | undefined;
  private otp: AbortController | null = null;
  private saved: SavedVerification | null = null;
  private codeAccepted = false;
  private switching: Promise<VerificationState> | null = null;
  /** The step `autoFallback` last switched from. */
  private autoSwitchedAt: string | null = null;
  private device: DeviceHint | undefined;

  constructor(private readonly options: VerificationClientOptions = {}) {
    const fetchImpl = options.fetch ?? browser.fetch?.bind(globalThis);
    if (!fetchImpl) throw new TypeError('VerificationClient needs fetch (pass options.fetch)');
    this.transport = new RoutesTransport(
      options.baseUrl ?? '/verification',
      fetchImpl,
      options.serverNow,
      options.headers,
    );
    this.slot = new SavedVerificationSlot(
      options.storage === undefined ? defaultStorage() : options.storage,
      options.storageKey ?? 'nestjs-phone-verification',
    );
    const NativeEventSource = browser.EventSource;
    this.eventSource =
      options.eventSource !== undefined
        ? options.eventSource
        : options.headers
          ? fetchEventSource(fetchImpl, options.headers)
          : NativeEventSource
            ? (url) => new NativeEventSource(url)
            : null;
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
    this.set({ ...IDLE, phase: 'starting', method: input.method ?? null });
    try {
      // Undefined fields drop out of the JSON: the server refuses unknown ones (an older one `device`).
      const body = { phone_number: input.phoneNumber, method: input.method, device: input.device };
      const answer = await heldOver(
        (method) => this.transport.request<StartAnswer>('/start', signal, { ...body, method }),
        input.method,
      );
      if (!signal.aborted) this.follow(answer, answer.phone_number, answer.resumed, signal);
    } catch (error) {
      this.refused(error, signal, { ...IDLE, method: input.method ?? null });
    }
    return this.state;
  }

  /** Picks up the verification a reload left, if any. Resolves true when one was resumed. */
  async resume(): Promise<boolean> {
    const saved = this.slot.read();
    if (!saved) return false;
    const signal = this.restart();
    this.set({ ...IDLE, phase: 'starting', method: saved.method, verificationId: saved.id, resumed: true });
    try {
      const answer = await this.transport.request<StatusAnswer>(
        `/status/${encodeURIComponent(saved.id)}${tokenQuery(saved.token)}`,
        signal,
      );
      if (signal.aborted) return false;
      if (isTerminal(answer.status)) this.slot.clear();
      else this.follow(answer, saved.phone, true, signal, saved.token);
      this.set({ ...this.state, phase: isTerminal(answer.status) ? 'idle' : this.state.phase });
      return !isTerminal(answer.status);
    } catch (error) {
      if ((error as VerificationClientError).code === 'not_found') this.slot.clear();
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
      const answer = await this.transport.request<CheckAnswer>('/check', signal, {
        verification_id: verificationId,
        code: code.replace(/[\s-]/g, ''),
        journey_token: this.saved?.token,
      });
      if (signal.aborted) return this.state;
      if (answer.verified) this.finish({ ...this.state, phase: 'verified', status: answer.status });
      else {
        // operator_id: the operator accepted the code; its verdict comes by status.
        this.codeAccepted = true;
        this.set({ ...this.state, phase: 'verifying', status: answer.status, prompt: null });
      }
    } catch (error) {
      const refusal = error as VerificationClientError;
      const attempts = refusal.attemptsRemaining;
      // No attempt left: the API fails the session (the status route will say so too).
      if (refusal.code === 'not_found' || attempts === 0)
        this.refused(error, signal, {
          ...this.state,
          phase: 'failed',
          status: attempts === 0 ? 'failed' : this.state.status,
          attemptsRemaining: attempts ?? this.state.attemptsRemaining,
        });
      else
        this.refused(error, signal, {
          ...this.state,
          phase: 'awaiting_user',
          attemptsRemaining: typeof attempts === 'number' ? attempts : this.state.attemptsRemaining,
        });
      // The session moved on: the server says what it became.
      if (refusal.code === 'not_pending') this.follower?.refresh();
    }
    return this.state;
  }

  /** A new code (a new start for the same number and method), once `canResend`. */
  async resend(): Promise<VerificationState> {
    const saved = this.saved;
    if (!saved?.phone || !this.state.canResend) return this.local('resend_unavailable');
    return this.start({ phoneNumber: saved.phone, method: saved.method, device: this.device });
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
      const answer = await heldOver(
        (named) =>
          this.transport.request<StartAnswer>('/switch', signal, {
            verification_id: verificationId,
            method: named,
            journey_token: this.saved?.token,
          }),
        method,
      );
      if (signal.aborted) return this.state;
      this.follower?.stop();
      this.follower = null;
      this.codeAccepted = false;
      this.state = { ...this.state, error: null, attemptsRemaining: null, resumed: false };
      this.follow(answer, this.saved?.phone ?? '', false, signal);
    } catch (error) {
      const refusal = error as VerificationClientError;
      this.refused(error, signal, {
        ...this.state,
        switchMethods: refusal.code === 'journey_limit_reached' ? [] : this.state.switchMethods,
        fallbackAvailableAt: dateMs(refusal.problem?.fallback_available_at) ?? this.state.fallbackAvailableAt,
      });
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
    const token = this.saved?.token;
    this.restart();
    const mine = this.controller;
    this.slot.clear();
    this.set({ ...IDLE, phase: 'canceled', method, phoneNumber });
    if (!verificationId || !live) return this.state;
    try {
      // Not aborted by a start that follows: the cancel is for this verification, whatever comes next.
      await this.transport.request<CancelAnswer>('/cancel', new AbortController().signal, {
        verification_id: verificationId,
        journey_token: token,
      });
    } catch (error) {
      const refusal = error as VerificationClientError;
      if (this.controller !== mine) return this.state;
      if (refusal.verificationStatus === 'verified')
        this.set({ ...this.state, phase: 'verified', status: 'verified', verificationId });
      // Unknown or already over: nothing left to cancel.
      else if (refusal.code !== 'not_found' && refusal.code !== 'not_pending')
        this.set({ ...this.state, error: refusal });
    }
    return this.state;
  }

  /** Back to `idle` (after an outcome, to start afresh). */
  reset(): void {
    this.restart();
    this.slot.clear();
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

  private restart(): AbortSignal {
    this.controller.abort();
    this.controller = new AbortController();
    this.follower?.stop();
    this.follower = null;
    this.saved = null;
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
    // A switch's answer carries the journey's newest token; a start's none (a journey of one step).
    const token = answer.journey_token ?? heldToken;
    this.saved = { id: answer.verification_id, method: answer.method, phone, ...(token ? { token } : {}) };
    this.slot.write(this.saved);
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
      () => tokenQuery(this.saved?.token),
    );
    this.follower.start(this.eventSource);
  }

  private apply(answer: StatusAnswer, extra: Partial<VerificationState>): void {
    const saved = this.saved;
    // Another tab switched the method: a reload and a resend go on with the new one.
    if (saved && saved.method !== answer.method) {
      this.codeAccepted = false;
      this.slot.write((this.saved = { ...saved, method: answer.method }));
    }
    // The journey's newest token (another tab's switch): kept for the calls and a reload that follow.
    if (this.saved && answer.journey_token && answer.journey_token !== this.saved.token)
      this.slot.write((this.saved = { ...this.saved, token: answer.journey_token }));
    const { phase, prompt } = phaseOf(answer, this.codeAccepted);
    const tried = this.state.methodsTried;
    const next: VerificationState = {
      ...this.state,
      ...extra,
      phase,
      prompt,
      verificationId: answer.verification_id,
      method: answer.method,
      status: answer.status,
      expiresAt: dateMs(answer.expires_at),
      // A server without journeys says nothing of these: one method, nothing to switch to.
      methodsTried:
        answer.methods_tried ?? (tried.includes(answer.method) ? tried : [...tried, answer.method]),
      switchMethods: answer.switch_methods ?? [],
      fallbackAvailableAt: dateMs(answer.fallback_available_at),
    };
    if (isTerminal(answer.status)) this.finish(next);
    else this.set(next);
  }

  private finish(state: VerificationState): void {
    this.follower?.stop();
    this.follower = null;
    this.slot.clear();
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
    const live =
      this.state.phase === 'awaiting_user' ||
      this.state.phase === 'verifying' ||
      waitUntil(this.state.error) !== null;
    if (live && this.ticker === undefined) this.ticker = setInterval(() => this.tick(), TICK_MS);
    if (!live && this.ticker !== undefined) {
      clearInterval(this.ticker);
      this.ticker = undefined;
    }
    for (const listener of [...this.listeners]) listener(this.state);
    this.fallBackByItself();
  }

  /** `autoFallback`: the switch the user would ask for, once per step (a refused one is not retried). */
  private fallBackByItself(): void {
    const { canSwitch, verificationId, method, methodsTried } = this.state;
    if (!this.options.autoFallback || !canSwitch || this.switching || !verificationId) return;
    const step = `${verificationId}:${methodsTried.length}:${method ?? ''}`;
    if (this.autoSwitchedAt === step) return;
    this.autoSwitchedAt = step;
    void this.switchMethod();
  }

  private withCountdowns(state: VerificationState): VerificationState {
    return withCountdowns(state, this.now(), !!this.saved?.phone);
  }

  private tick(): void {
    const before = this.state;
    const next = this.withCountdowns(before);
    const pending = next.phase === 'awaiting_user' || next.phase === 'verifying';
    if (pending && next.expiresAt !== null) {
      const over = this.now() - next.expiresAt;
      if (over >= EXPIRY_GRACE_MS) return this.finish({ ...next, phase: 'expired', status: 'expired' });
      if (over >= 0 && before.expiresInMs !== 0) this.follower?.pollNow();
    }
    if (
      next.expiresInMs !== before.expiresInMs ||
      next.resendInMs !== before.resendInMs ||
      next.retryInMs !== before.retryInMs ||
      next.canResend !== before.canResend ||
      next.fallbackInMs !== before.fallbackInMs
    )
      this.set(next);
  }

  /** WebOTP runs while a code is awaited, and is aborted as soon as it no longer is. */
  private watchCode(): void {
    const wanted =
      this.options.webOtp !== false &&
      this.state.phase === 'awaiting_user' &&
      this.state.prompt?.kind === 'code';
    if (wanted && !this.otp) {
      const otp = (this.otp = new AbortController());
      void receiveSmsCode(otp.signal).then((code) => {
        if (code && this.otp === otp) void this.check(code);
      });
    } else if (!wanted && this.otp) {
      this.otp.abort();
      this.otp = null;
    }
  }
}

/**
 * Runs `send` with `method`; a graded answer (409 `method_held`: this number is offered only methods
 * charged on proof for now) is followed once, with the first method it offers: the page then asks
 * the user to call a number, or to open the bot, instead of waiting for a code.
 */
async function heldOver<T>(
  send: (method: string | undefined) => Promise<T>,
  method: string | undefined,
): Promise<T> {
  try {
    return await send(method);
  } catch (error) {
    const offered = (error as VerificationClientError).problem?.offered_methods;
    const next = Array.isArray(offered) && typeof offered[0] === 'string' ? offered[0] : undefined;
    if ((error as VerificationClientError).code !== 'method_held' || next === undefined || next === method)
      throw error;
    return send(next);
  }
}
