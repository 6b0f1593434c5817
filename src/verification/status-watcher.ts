import { isJourneyTerminal } from '../core/journey.js';
import type { StatusView } from './verification.views.js';

/** One follower of a journey's status (a status stream), as StatusWatch hands it out. */
export interface StatusWatcherSpec {
  /** The journey the handle names (its first session's request id). */
  readonly journeyId: string;
  readonly verificationId: string;
  /** Whom the handle is bound to: the journey token of a switched journey is sealed for it. */
  readonly owner: string | undefined;
  readonly clientKey: string;
  /** The status answer when the watch opened. */
  readonly first: StatusView;
  /** Its first read's place among StatusWatch's reads of journeys (an older read's push is not offered to it). */
  readonly firstRead: number;
  /** Real time (performance.now) of the open. */
  readonly openedAt: number;
}

/**
 * What one status stream is shown, read top to bottom by its caller: `next()` gives the first
 * answer, then each answer that differs from the last one given (only what the frontend sees
 * counts), and undefined once the journey reached a status the frontend must act on (after that
 * answer), or the watch was closed. Kept small: a deployment may hold tens of thousands.
 */
export class StatusWatcher {
  /** Real time after which the stream ends (later when a switch starts a newer session). */
  endsAt: number;
  #lastShown: string | null = null;
  #pending: StatusView | undefined;
  #waiting: ((view: StatusView | undefined) => void) | undefined;
  #ended = false;
  #closed = false;

  constructor(
    readonly spec: StatusWatcherSpec,
    /** When a stream showing a view ends (StatusWatch: its session's expiry and grace, its longest life). */
    private readonly endOf: (openedAt: number, view: StatusView) => number,
    private readonly onClosed: (watcher: StatusWatcher) => void,
  ) {
    this.#pending = spec.first;
    this.endsAt = endOf(spec.openedAt, spec.first);
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** The next answer to show; undefined when there is none to come. */
  async next(): Promise<StatusView | undefined> {
    for (;;) {
      if (this.#closed || this.#ended) return undefined;
      const pending = this.#pending;
      this.#pending = undefined;
      // An answer offered between the wake-up below and this loop's next turn stays pending for that turn.
      const view = pending ?? (await new Promise<StatusView | undefined>((r) => (this.#waiting = r)));
      if (!view) return undefined;
      if (isJourneyTerminal(view.status)) this.#ended = true;
      const shown = shownState(view);
      if (shown === this.#lastShown) continue;
      if (this.#lastShown !== null) this.endsAt = Math.max(this.endsAt, this.endOf(this.spec.openedAt, view));
      this.#lastShown = shown;
      return view;
    }
  }

  /** A newer answer (StatusWatch, on a change): it replaces one not taken yet. */
  offer(view: StatusView): void {
    if (this.#closed) return;
    const waiting = this.#waiting;
    this.#waiting = undefined;
    if (waiting) waiting(view);
    else this.#pending = view;
  }

  /** The stream is gone: nothing of it stays behind. Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#pending = undefined;
    const waiting = this.#waiting;
    this.#waiting = undefined;
    waiting?.(undefined);
    this.onClosed(this);
  }
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
