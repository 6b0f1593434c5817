import { Inject, Injectable } from '@nestjs/common';
import { awaitsUnreportedChange, type SessionRecord } from '../core/session-record.js';
import { pollIntervalMs, SLOWEST_POLL_INTERVAL_MS } from '../core/verification-method.js';
import { isTerminal } from '../core/verification-status.js';
import {
  asVerificationError,
  VerificationClientError,
  VerificationError,
} from '../core/verification.errors.js';
import { errorText } from '../core/error-text.js';
import { VerificationTelemetry } from '../observability/verification-telemetry.js';
import { RESOLVED_VERIFICATION_OPTIONS } from '../options/verification-options.tokens.js';
import type { ResolvedVerificationOptions } from '../options/verification.options.js';
import { VerificationProtection } from '../protection/verification-protection.service.js';
import { SessionRecordRepository } from '../sessions/session-record.repository.js';
import { JourneyHandles } from './journey-handles.js';
import type { LoadedJourney } from './journey-state.js';
import { StatusFlow } from './status.flow.js';
import { StatusWatcher } from './status-watcher.js';
import { StreamSlots } from './stream-slots.js';
import type { StatusView } from './verification.views.js';

/** Who asks to watch a journey's status (a status stream's open). */
export interface StatusWatchRequest {
  verificationId: string;
  owner: string | undefined;
  journeyToken?: string;
  /** The platform's request and its client IP, for the caller's key (the per-client cap). */
  request: unknown;
  ip: string | undefined;
}

/** How soon a read the store failed is tried again (a store briefly away), and the longest wait (a store away). */
const STORE_RETRY_MS = 1000;
const MAX_STORE_RETRY_MS = 8000;

/**
 * Follows journeys' status for the status streams this instance holds (http/status-stream.hub.ts writes
 * them and closes this at shutdown); every read is StatusFlow's. Caps per client and per verification. A
 * change anywhere in the deployment is announced through the store under its session's request id (a
 * switch or cancel under the journey's); a watched journey is read once per change and each watcher offered
 * the answer. A watcher hears every step of its journey but follows only the current one, asking the API
 * itself (the coalesced refresher, at the method's poll pace) only where nobody would report the next
 * change (`needsLooking`). What went unheard is made up: a change announced while a stream opened or
 * before a new step was listed, a read the store failed, a subscription lost and back.
 */
@Injectable()
export class StatusWatch {
  /** Watchers by journey id. */
  private readonly watchers = new Map<string, Set<StatusWatcher>>();
  /** Journeys by the request ids of their sessions (a watched journey's steps as last read). */
  private readonly journeysOf = new Map<string, Set<string>>();
  /** Request ids each watched journey is listed under in `journeysOf`. */
  private readonly stepsOf = new Map<string, string[]>();
  private readonly slots: StreamSlots;
  private readonly reading = new Map<string, boolean>();
  /** Journeys whose read the store failed: the timer of the next try, and the wait after the next failure. */
  private readonly retries = new Map<string, { timer?: ReturnType<typeof setTimeout>; delayMs: number }>();
  /** The follower of each watched journey that has one (see `follow`): its timer, none while it looks. */
  private readonly followers = new Map<string, { timer?: ReturnType<typeof setTimeout> }>();
  private listening: Promise<() => void> | undefined;
  /** Changes announced so far (any session): one announced while a watcher opened is read again for it. */
  private announced = 0;
  /** Reads of journeys begun so far: a push is offered only to watchers whose first read ended before it began. */
  private readsBegun = 0;
  private stopped = false;

  constructor(
    @Inject(RESOLVED_VERIFICATION_OPTIONS) private readonly options: ResolvedVerificationOptions,
    private readonly status: StatusFlow,
    private readonly handles: JourneyHandles,
    private readonly records: SessionRecordRepository,
    private readonly protection: VerificationProtection,
    private readonly telemetry: VerificationTelemetry,
  ) {
    this.slots = new StreamSlots(options.statusStream);
  }

  /**
   * A watcher of a journey, its first answer read. Refusals (404 not_found, 429
   * rate_limit_exceeded, 503) are thrown as the status route's are.
   */
  async open({
    verificationId,
    owner,
    journeyToken,
    request,
    ip,
  }: StatusWatchRequest): Promise<StatusWatcher> {
    if (this.stopped) throw shuttingDown();
    const journeyId = this.handles.open(verificationId, owner);
    // The slots are taken before the first await, so concurrent opens cannot pass a cap together.
    const clientKey = this.slots.take(this.protection.clientKey(request, ip), journeyId);
    try {
      await this.listen();
      const announced = this.announced;
      const openedAt = performance.now();
      // The current answer, exactly as the status route gives it (and with its refusals).
      const first = await this.status.status(verificationId, owner, journeyToken, { request, ip });
      // Taken once it ended: a read begun during it may have read the store before it saved what it asked the API.
      const firstRead = ++this.readsBegun;
      // A shutdown that began while this open read would never end its stream: the server's close waits on it.
      if (this.stopped) throw shuttingDown();
      const watcher = new StatusWatcher(
        { journeyId, verificationId, owner, clientKey, first, firstRead, openedAt },
        (at, view) => this.endOf(at, view),
        (closed) => this.remove(closed),
      );
      this.add(watcher);
      // A change announced after its first read and before it was listed reached nobody: read once more.
      if (this.announced !== announced) this.changed(journeyId);
      return watcher;
    } catch (error) {
      this.slots.release(clientKey, journeyId);
      // The status route's refusals as they are; the store unreachable for the subscription is a 503.
      if (!(error instanceof VerificationError))
        this.telemetry.logger.warn(`status stream refused: ${errorText(error)}`);
      throw asVerificationError(error);
    }
  }

  /** Stops accepting watchers and closes every one (the hub's shutdown); idempotent. */
  close(): void {
    this.stopped = true;
    for (const watchers of [...this.watchers.values()]) for (const watcher of [...watchers]) watcher.close();
    this.watchers.clear();
    this.journeysOf.clear();
    this.stepsOf.clear();
    for (const timing of [...this.followers.values(), ...this.retries.values()]) clearTimeout(timing.timer);
    this.followers.clear();
    this.retries.clear();
    const listening = this.listening;
    this.listening = undefined;
    listening?.then((unsubscribe) => unsubscribe()).catch(() => undefined);
  }

  /** When a stream showing `view` ends: past its session's expiry and grace, and never past its longest life. */
  private endOf(openedAt: number, view: StatusView): number {
    const left = Math.max(
      0,
      view.expiresAt.getTime() + this.options.reconcile.graceMs - this.options.clock(),
    );
    return Math.min(openedAt + this.options.statusStream.maxDurationMs, performance.now() + left);
  }

  private listen(): Promise<() => void> {
    if (!this.listening) {
      this.listening = this.records.listen(
        (requestId) => {
          this.announced += 1;
          for (const journeyId of this.journeysOf.get(requestId) ?? []) this.changed(journeyId);
        },
        // The subscription was lost and is back: what was announced in between reached nobody.
        () => {
          this.announced += 1;
          for (const journeyId of this.watchers.keys()) this.changed(journeyId);
        },
      );
      // A failed subscription is tried again by the next watcher.
      this.listening.catch(() => (this.listening = undefined));
    }
    return this.listening;
  }

  /** A session of a watched journey (or the journey) changed somewhere in the deployment: one read, then each watcher's answer. */
  private changed(journeyId: string): void {
    // A read the store failed is tried again (`retry`): what changes meanwhile is read then.
    if (!this.watchers.has(journeyId) || this.retries.get(journeyId)?.timer) return;
    if (this.reading.has(journeyId)) {
      // Reads of one journey never overlap (an older answer could overtake a newer one): read once more after.
      this.reading.set(journeyId, true);
      return;
    }
    this.reading.set(journeyId, false);
    void this.push(journeyId)
      .catch((error: unknown) => {
        this.telemetry.logger.warn(`status stream could not offer a change: ${errorText(error)}`);
        return false;
      })
      .then((pushed) => {
        const again = this.reading.get(journeyId);
        this.reading.delete(journeyId);
        if (pushed) this.retries.delete(journeyId);
        else this.retry(journeyId);
        if (again) this.changed(journeyId);
      });
  }

  /** The change a failed read was for is announced once: read again later, each wait twice the last. */
  private retry(journeyId: string): void {
    if (this.stopped || !this.watchers.has(journeyId)) return;
    const retry = this.retries.get(journeyId) ?? { delayMs: STORE_RETRY_MS };
    this.retries.set(journeyId, retry);
    retry.timer = setTimeout(() => {
      retry.timer = undefined;
      this.changed(journeyId);
    }, retry.delayMs);
    retry.timer.unref();
    retry.delayMs = Math.min(2 * retry.delayMs, MAX_STORE_RETRY_MS);
  }

  /** One read of the journey offered to its watchers; false when the store failed it. */
  private async push(journeyId: string): Promise<boolean> {
    let read: { loaded: LoadedJourney; view: StatusView } | null;
    const began = ++this.readsBegun;
    try {
      read = await this.status.stored(journeyId);
    } catch (error) {
      this.telemetry.logger.warn(`status stream could not read a session: ${errorText(error)}`);
      return false;
    }
    const watchers = this.watchers.get(journeyId);
    if (!read || !watchers) return true;
    const { loaded, view } = read;
    // A switch: the new session is listened to, and followed if it needs it.
    if (this.listed(journeyId, stepIds(loaded))) this.follow(journeyId);
    for (const watcher of watchers)
      // A watcher whose first read ended after this one began was answered at least as freshly: not set back.
      if (watcher.spec.firstRead < began)
        watcher.offer({
          ...view,
          verificationId: watcher.spec.verificationId,
          // After a switch (here or in another tab) the page learns the journey's newest token.
          ...this.handles.token(loaded.journey, watcher.spec.owner),
        });
    return true;
  }

  /**
   * Lists the journey under its steps as read; whether a step is new. A change of a new step announced
   * before now reached nobody (it was not listed): the journey is read once more.
   */
  private listed(journeyId: string, steps: string[]): boolean {
    if (!this.listUnder(journeyId, steps)) return false;
    this.changed(journeyId);
    return true;
  }

  /** Lists the journey under the request ids of its sessions (a switch adds one); whether that changed anything. */
  private listUnder(journeyId: string, steps: string[]): boolean {
    if (!this.watchers.has(journeyId)) return false;
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

  private add(watcher: StatusWatcher): void {
    const { journeyId } = watcher.spec;
    let watchers = this.watchers.get(journeyId);
    if (!watchers) {
      this.watchers.set(journeyId, (watchers = new Set()));
      // Listed under its own id at once (a switch or cancel is announced under it); its steps follow.
      this.listUnder(journeyId, [journeyId]);
      this.follow(journeyId);
    }
    watchers.add(watcher);
  }

  /** The watcher closed: nothing of it stays behind. */
  private remove(watcher: StatusWatcher): void {
    const { journeyId, clientKey } = watcher.spec;
    const watchers = this.watchers.get(journeyId);
    if (!watchers?.delete(watcher)) return;
    this.slots.release(clientKey, journeyId);
    if (watchers.size > 0) return;
    this.watchers.delete(journeyId);
    this.unlist(journeyId);
    for (const timings of [this.followers, this.retries]) {
      clearTimeout(timings.get(journeyId)?.timer);
      timings.delete(journeyId);
    }
  }

  /**
   * Follows a watched journey's current session while it needs the watch to ask for its changes (see
   * the class comment). A switch announces itself: the next look follows the new session.
   */
  private follow(journeyId: string): void {
    if (this.stopped || this.followers.has(journeyId)) return;
    const follower: { timer?: ReturnType<typeof setTimeout> } = {};
    this.followers.set(journeyId, follower);
    const arm = (delayMs: number): void => {
      // A follower whose watchers closed (and maybe came back with a follower of their own) stops.
      if (this.followers.get(journeyId) !== follower) return;
      if (!Number.isFinite(delayMs) || !this.watchers.has(journeyId) || this.stopped) {
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
    if (!this.watchers.has(journeyId)) return NaN;
    try {
      const looked = await this.status.followed(journeyId, (record) => this.needsLooking(record));
      if (!looked) return NaN;
      this.listed(journeyId, stepIds(looked));
      const fresh = looked.current;
      return looked.journey.canceledAt === undefined && this.needsLooking(fresh)
        ? pollIntervalMs(fresh.method)
        : NaN;
    } catch {
      // Upstream or store trouble: look again one interval later.
      return SLOWEST_POLL_INTERVAL_MS;
    }
  }
}

function stepIds(loaded: LoadedJourney): string[] {
  return loaded.journey.steps.map((step) => step.requestId);
}

/** A stream refused because the app is shutting down: the page reconnects (to another instance) in a second. */
function shuttingDown(): VerificationClientError {
  return new VerificationClientError('service_unavailable', 'The server is shutting down', {}, 1);
}
