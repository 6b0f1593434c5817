import {
  Inject,
  Injectable,
  type BeforeApplicationShutdown,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { VerificationLogger } from '../observability/verification-logger.js';
import { VerificationProtection } from '../protection/verification-protection.service.js';
import { SessionChanges } from '../sessions/session-changes.js';
import { awaitsUnreportedChange, type SessionRecord } from '../core/session-record.js';
import { isJourneyTerminal } from '../core/journey.js';
import { pollIntervalMs, SLOWEST_POLL_INTERVAL_MS } from '../core/verification-method.js';
import { isTerminal } from '../core/verification-status.js';
import { SessionRefresher } from '../sessions/session-refresher.js';
import { JourneyState, type LoadedJourney } from '../verification/journey-state.js';
import { VerificationHandleCodec } from '../core/verification-handle.codec.js';
import { VerificationService } from '../verification/verification.service.js';
import type { StatusView } from '../verification/verification.views.js';
import { VerificationStore } from '../store/verification-store.interface.js';
import { RESOLVED_VERIFICATION_OPTIONS } from '../options/verification-options.tokens.js';
import {
  asVerificationError,
  VerificationClientError,
  VerificationError,
} from '../core/verification.errors.js';
import type { ResolvedVerificationOptions } from '../options/verification.options.js';
import { clientIp } from './client-request.js';
import { SseResponse } from './sse-response.js';
import { VerificationStatusResponse } from './verification.responses.js';
import { errorText } from '../core/error-text.js';

/** One open stream. Kept small: a deployment may hold tens of thousands. */
interface StatusStream {
  /** The journey the handle names (its first session's request id). */
  readonly journeyId: string;
  readonly verificationId: string;
  /** Whom the handle is bound to: the journey token of a switched journey is sealed for it. */
  readonly owner: string | undefined;
  readonly clientKey: string;
  readonly response: SseResponse;
  /** Real time (performance.now) of the open, for the stream's longest life. */
  readonly openedAt: number;
  /** Real time after which the stream is ended at the next heartbeat (later when a switch starts a newer session). */
  endsAt: number;
  lastId: number;
  /** What the last answer sent showed of the session (see `shown`); null until the first one went out. */
  lastShown: string | null;
  /** A change was announced before the first answer went out: read again after it. */
  missed: boolean;
}

/** One follower loop: its pending timer (none while a look is under way). */
interface Follower {
  timer?: ReturnType<typeof setTimeout>;
}

/** Streams of callers without any key (no IP from the platform) share one cap. */
const NO_CLIENT_KEY = '';

/** Retry-After of the cap's 429: streams end with their sessions, so a slot is soon free again. */
const CAP_RETRY_AFTER_SECONDS = 5;

/**
 * The status streams held by this instance, one set per journey. A change of a session, observed
 * anywhere in the deployment, is announced through the store (SessionChanges), as is a journey's
 * switch or cancel (under the journey's id); the hub reads the journey once and writes the status
 * answer to each of its streams, then ends them at a status the frontend must act on (terminal, or
 * canceled). A stream listens to every session of its journey (a switched-away one that verifies
 * makes the journey verified) but follows only the current one. Streams add no upstream GET where observations happen anyway: webhooks report outcomes,
 * and the reconciler follows every session (at the spec's pace without webhooks). The hub asks the
 * API itself, through the coalesced refresher at the method's poll interval, only for a streamed
 * session whose next change nobody would report (the reconciler off, or with webhooks on a change
 * the API sends no webhook for: `awaitsUnreportedChange`), so a page on a stream sees it as soon as
 * a polling page would.
 */
@Injectable()
export class StatusStreamHub implements BeforeApplicationShutdown, OnApplicationShutdown {
  /** Streams by journey id. */
  private readonly sessions = new Map<string, Set<StatusStream>>();
  /** Journeys by the request ids of their sessions (a streamed journey's steps as last read). */
  private readonly journeysOf = new Map<string, Set<string>>();
  /** Request ids each streamed journey is listed under in `journeysOf`. */
  private readonly stepsOf = new Map<string, string[]>();
  private readonly perClient = new Map<string, number>();
  /** Streams held (or being opened) per journey on this instance. */
  private readonly perJourney = new Map<string, number>();
  private readonly reading = new Map<string, boolean>();
  /** The follower of each streamed journey that has one (see `follow`). */
  private readonly followers = new Map<string, Follower>();
  private readonly handles: VerificationHandleCodec;
  private listening: Promise<() => void> | undefined;
  private heartbeat: ReturnType<typeof setInterval> | undefined;
  private stopped = false;

  constructor(
    @Inject(RESOLVED_VERIFICATION_OPTIONS) private readonly options: ResolvedVerificationOptions,
    @Inject(VerificationStore) private readonly store: VerificationStore,
    private readonly verification: VerificationService,
    private readonly journeys: JourneyState,
    private readonly refresher: SessionRefresher,
    private readonly changes: SessionChanges,
    private readonly protection: VerificationProtection,
    private readonly logger: VerificationLogger,
  ) {
    this.handles = new VerificationHandleCodec(options.handleKey ?? options.api.apiSecret);
  }

  /** Streams open on this instance. */
  get size(): number {
    let total = 0;
    for (const streams of this.sessions.values()) total += streams.size;
    return total;
  }

  /**
   * Opens a stream and sends the current status answer. Refusals (404 not_found, 429
   * rate_limit_exceeded, 503) are thrown before anything is written, as the status route's are.
   */
  async open(
    verificationId: string,
    owner: string | undefined,
    request: unknown,
    response: unknown,
    journeyToken?: string,
  ): Promise<void> {
    if (this.stopped)
      throw new VerificationClientError('service_unavailable', 'The server is shutting down', {}, 1);
    const journeyId = this.handles.open(verificationId, owner);
    if (journeyId === null) throw new VerificationClientError('not_found');
    const clientKey = this.protection.clientKey(request, clientIp(request)) ?? NO_CLIENT_KEY;
    const held = this.perClient.get(clientKey) ?? 0;
    const ofJourney = this.perJourney.get(journeyId) ?? 0;
    if (
      held >= this.options.statusStream.maxPerClient ||
      ofJourney >= this.options.statusStream.maxPerVerification
    )
      throw new VerificationClientError(
        'rate_limit_exceeded',
        'Too many open status streams',
        {},
        CAP_RETRY_AFTER_SECONDS,
      );
    // The slots are taken before the first await, so concurrent opens cannot pass a cap together.
    this.perClient.set(clientKey, held + 1);
    this.perJourney.set(journeyId, ofJourney + 1);
    let stream: StatusStream;
    let view: StatusView;
    try {
      await this.listen();
      const startedAt = performance.now();
      // The current answer, exactly as the status route gives it (and with its refusals).
      view = await this.verification.status(verificationId, owner, journeyToken);
      stream = {
        journeyId,
        verificationId,
        owner,
        clientKey,
        response: SseResponse.take(response),
        openedAt: startedAt,
        endsAt: this.endOf(startedAt, view),
        lastId: 0,
        lastShown: null,
        missed: false,
      };
      this.add(stream);
    } catch (error) {
      this.releaseSlot(clientKey, journeyId);
      // The status route's refusals as they are; the store unreachable for the subscription is a 503.
      if (!(error instanceof VerificationError))
        this.logger.warn(`status stream refused: ${errorText(error)}`);
      throw asVerificationError(error);
    }
    const opened = stream;
    opened.response.onClose(() => this.remove(opened));
    // The client may have left while the first answer was read.
    if (opened.response.closed) {
      this.remove(opened);
      return;
    }
    // Reconnection after an early end (maximum duration, shutdown): at the pace a poll would have had.
    opened.response.open(view.pollIntervalMs);
    this.send(opened, view);
    if (opened.missed) this.changed(journeyId);
  }

  /** When a stream showing `view` ends: past its session's expiry and grace, and never past its longest life. */
  private endOf(openedAt: number, view: StatusView): number {
    const left = Math.max(0, view.expiresAt.getTime() + this.options.reconcile.graceMs - this.store.now());
    return Math.min(openedAt + this.options.statusStream.maxDurationMs, performance.now() + left);
  }

  /**
   * Ends every stream before Nest closes the HTTP server (which waits for open responses, so an
   * open stream would hold the shutdown forever), and stops accepting new ones.
   */
  beforeApplicationShutdown(): void {
    this.onApplicationShutdown();
  }

  /** The same, for a context whose server was closed by other means; idempotent. */
  onApplicationShutdown(): void {
    this.stopped = true;
    for (const streams of [...this.sessions.values()])
      for (const stream of [...streams]) stream.response.end();
    this.sessions.clear();
    this.journeysOf.clear();
    this.stepsOf.clear();
    this.perClient.clear();
    for (const follower of this.followers.values()) clearTimeout(follower.timer);
    this.followers.clear();
    this.stopHeartbeat();
    const listening = this.listening;
    this.listening = undefined;
    listening?.then((unsubscribe) => unsubscribe()).catch(() => undefined);
  }

  private listen(): Promise<() => void> {
    if (!this.listening) {
      this.listening = this.changes.listen((requestId) => {
        for (const journeyId of this.journeysOf.get(requestId) ?? []) this.changed(journeyId);
      });
      // A failed subscription is tried again by the next stream.
      this.listening.catch(() => (this.listening = undefined));
    }
    return this.listening;
  }

  /** A session of a streamed journey (or the journey) changed somewhere in the deployment: one read, then each stream's answer. */
  private changed(journeyId: string): void {
    const streams = this.sessions.get(journeyId);
    if (!streams) return;
    if (this.reading.has(journeyId)) {
      // Reads of one journey never overlap (an older answer could overtake a newer one): read once more after.
      this.reading.set(journeyId, true);
      return;
    }
    this.reading.set(journeyId, false);
    void this.push(journeyId).finally(() => {
      const again = this.reading.get(journeyId);
      this.reading.delete(journeyId);
      if (again) this.changed(journeyId);
    });
  }

  private async push(journeyId: string): Promise<void> {
    let loaded: LoadedJourney | null;
    let view: StatusView | undefined;
    try {
      loaded = await this.journeys.read(journeyId);
      if (loaded) view = await this.journeys.view('', loaded);
    } catch (error) {
      // The store is away: the next change, the follower or the stream's end comes later.
      this.logger.warn(`status stream could not read a session: ${errorText(error)}`);
      return;
    }
    const streams = this.sessions.get(journeyId);
    if (!loaded || !view || !streams) return;
    // A switch: the new session is listened to, and followed if it needs it.
    if (this.listUnder(journeyId, stepIds(loaded))) this.follow(journeyId);
    for (const stream of [...streams]) {
      if (stream.lastShown === null) {
        stream.missed = true;
        continue;
      }
      this.send(stream, {
        ...view,
        verificationId: stream.verificationId,
        // After a switch (here or in another tab) the page learns the journey's newest token.
        ...(loaded.journey.steps.length > 1
          ? { journeyToken: this.handles.sealJourney(loaded.journey, stream.owner) }
          : {}),
      });
    }
  }

  /** Lists the journey under the request ids of its sessions (a switch adds one); whether that changed anything. */
  private listUnder(journeyId: string, steps: string[]): boolean {
    if (!this.sessions.has(journeyId)) return false;
    const listed = this.stepsOf.get(journeyId) ?? [];
    if (steps.length === listed.length && steps.every((id, i) => id === listed[i])) return false;
    this.unlist(journeyId);
    for (const requestId of steps) {
      let journeys = this.journeysOf.get(requestId);
      if (!journeys) this.journeysOf.set(requestId, (journeys = new Set()));
      journeys.add(journeyId);
    }
    this.stepsOf.set(journeyId, steps);
    return true;
  }

  private unlist(journeyId: string): void {
    for (const requestId of this.stepsOf.get(journeyId) ?? []) {
      const journeys = this.journeysOf.get(requestId);
      journeys?.delete(journeyId);
      if (journeys?.size === 0) this.journeysOf.delete(requestId);
    }
    this.stepsOf.delete(journeyId);
  }

  /** Writes the status answer when it differs from the last one; ends the stream after a terminal one. */
  private send(stream: StatusStream, view: StatusView): void {
    const shown = shownState(view);
    if (shown !== stream.lastShown) {
      if (stream.lastShown !== null)
        stream.endsAt = Math.max(stream.endsAt, this.endOf(stream.openedAt, view));
      stream.lastShown = shown;
      stream.response.event(++stream.lastId, JSON.stringify(VerificationStatusResponse.from(view)));
    }
    if (isJourneyTerminal(view.status)) stream.response.end();
  }

  private add(stream: StatusStream): void {
    let streams = this.sessions.get(stream.journeyId);
    if (!streams) {
      this.sessions.set(stream.journeyId, (streams = new Set()));
      // Listed under its own id at once (a switch or cancel is announced under it); its steps follow.
      this.listUnder(stream.journeyId, [stream.journeyId]);
      this.follow(stream.journeyId);
    }
    streams.add(stream);
    this.startHeartbeat();
  }

  /** The client left or the stream ended: nothing of it stays behind. */
  private remove(stream: StatusStream): void {
    const streams = this.sessions.get(stream.journeyId);
    if (!streams?.delete(stream)) return;
    this.releaseSlot(stream.clientKey, stream.journeyId);
    if (streams.size > 0) return;
    this.sessions.delete(stream.journeyId);
    this.unlist(stream.journeyId);
    clearTimeout(this.followers.get(stream.journeyId)?.timer);
    this.followers.delete(stream.journeyId);
    if (this.sessions.size === 0) this.stopHeartbeat();
  }

  private releaseSlot(clientKey: string, journeyId: string): void {
    release(this.perClient, clientKey);
    release(this.perJourney, journeyId);
  }

  /**
   * Follows a streamed journey's current session while it needs the hub to ask for its changes (see
   * the class comment). A switch announces itself: the next look follows the new session.
   */
  private follow(journeyId: string): void {
    if (this.stopped || this.followers.has(journeyId)) return;
    const follower: Follower = {};
    this.followers.set(journeyId, follower);
    const arm = (delayMs: number): void => {
      // A follower whose streams ended (and maybe came back with a follower of their own) stops.
      if (this.followers.get(journeyId) !== follower) return;
      if (!Number.isFinite(delayMs) || !this.sessions.has(journeyId) || this.stopped) {
        this.followers.delete(journeyId);
        return;
      }
      follower.timer = setTimeout(() => void this.look(journeyId).then(arm), delayMs);
      follower.timer.unref();
    };
    void this.look(journeyId).then(arm);
  }

  /** Whether nobody else would observe the record's next change soon. */
  private needsLooking(record: SessionRecord): boolean {
    if (isTerminal(record.status)) return false;
    if (!this.options.reconcile.enabled) return true;
    return this.options.webhooks.enabled && awaitsUnreportedChange(record);
  }

  /**
   * One coalesced look at a followed journey's current session; the delay until the next one, or
   * never (a switch announces itself, and its push starts a follower again).
   */
  private async look(journeyId: string): Promise<number> {
    if (!this.sessions.has(journeyId)) return NaN;
    try {
      const loaded = await this.journeys.read(journeyId);
      if (!loaded) return NaN;
      this.listUnder(journeyId, stepIds(loaded));
      const record = loaded.current;
      if (loaded.journey.canceledAt !== undefined || !this.needsLooking(record)) return NaN;
      const fresh = await this.refresher.refresh(record, 'poll');
      return this.needsLooking(fresh) ? pollIntervalMs(fresh.method) : NaN;
    } catch {
      // Upstream or store trouble: look again one interval later.
      return SLOWEST_POLL_INTERVAL_MS;
    }
  }

  private startHeartbeat(): void {
    if (this.heartbeat) return;
    this.heartbeat = setInterval(() => this.beat(), this.options.statusStream.heartbeatMs);
    this.heartbeat.unref();
  }

  private stopHeartbeat(): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = undefined;
  }

  /** One timer for every stream: a ping each, and the end of those past their time. */
  private beat(): void {
    const now = performance.now();
    for (const streams of [...this.sessions.values()])
      for (const stream of [...streams]) {
        if (now >= stream.endsAt) stream.response.end();
        else stream.response.ping();
      }
  }
}

function stepIds(loaded: LoadedJourney): string[] {
  return loaded.journey.steps.map((step) => step.requestId);
}

/**
 * The part of a status answer that a record can change, to tell a new answer from a repeat. Kept
 * per stream instead of the whole answer (a fraction of its size, at tens of thousands of
 * streams); the rest (handle, masked number, poll interval, which follows the method) is fixed.
 * The journey's own fields (methods tried, methods to switch to, fallback time) count too.
 */
function shownState(view: StatusView): string {
  return [
    view.status,
    view.method,
    view.numberToCall,
    view.deepLink,
    view.awaitingCode,
    view.expiresAt.getTime(),
    view.verifiedAt?.getTime(),
    view.codeLength,
    view.codeLengthMin,
    view.codeLengthMax,
    view.methodsTried.join(','),
    view.switchMethods.join(','),
    view.fallbackAvailableAt?.getTime(),
  ].join('|');
}

/** One slot of a cap given back; a key holding none is dropped (the maps hold only what is open). */
function release(counts: Map<string, number>, key: string): void {
  const held = (counts.get(key) ?? 1) - 1;
  if (held > 0) counts.set(key, held);
  else counts.delete(key);
}
