import type { DataKeys } from '../core/data-keys.js';
import { storedSessionId } from '../core/test-session.js';
import { storeBatch } from '../store/store-batch.js';
import type { VerificationStore } from '../store/verification-store.interface.js';
import type { SlotHolder } from './spare-test-slots.js';
import { composed, type TestSessionEnd, type TestSessionState } from './test-session-state.js';

/** How long a test session's entries are kept past its end, for late reads (the reconciler's grace, a status page). */
const RETENTION_MS = 3_600_000;

/** A recorded end, and whether this call recorded it (false: another check or read ended the session first). */
export interface RecordedEnd {
  end: TestSessionEnd;
  won: boolean;
}

/**
 * Test sessions in the store, each as entries that are each written in one atomic step, so that checks
 * and reads racing on one session (on one instance or several) never write over each other: its start
 * (sealed: it names the number), written by its start alone (the only write of a spare slot's key, so
 * a session whose slot a newer one took is never brought back); its attempts used (a counter); and its
 * end (set-if-absent: the first end recorded stands, so a verified session is never failed afterwards,
 * nor a failed one verified). The last two are keyed by the session's own request id.
 */
export class TestSessionStore {
  constructor(
    private readonly store: VerificationStore,
    private readonly keys: DataKeys,
  ) {}

  /** Stores a new session's start; in a spare slot, the entries of the session it replaces go. */
  async create(state: TestSessionState): Promise<void> {
    const former =
      storedSessionId(state.requestId) === state.requestId ? null : await this.start(state.requestId);
    await this.store.set(
      testNumberSessionKey(state.requestId),
      this.keys.seal(JSON.stringify(state)),
      this.keptMs(state),
    );
    if (former !== null && former.requestId !== state.requestId)
      await Promise.all(sideKeys(former.requestId).map((key) => this.store.delete(key)));
  }

  /** The session as stored now (null: unknown, or a spare session whose slot a newer one took). */
  async read(requestId: string): Promise<TestSessionState | null> {
    const [stored, attempts, end] = await storeBatch(this.store, [
      { op: 'get', key: testNumberSessionKey(requestId) },
      { op: 'get', key: testSessionAttemptsKey(requestId) },
      { op: 'get', key: testSessionEndKey(requestId) },
    ]);
    const start = this.opened(stored);
    if (start?.requestId !== requestId) return null;
    return composed(start, Number(attempts ?? 0), parsedEnd(end));
  }

  /** What a spare slot holds now, for the choice of a new spare session's slot (see `chooseSpareSlot`). */
  async slotHolder(slotId: string): Promise<SlotHolder | null> {
    const start = await this.start(slotId);
    return start === null ? null : this.read(start.requestId);
  }

  /** Takes one of the session's attempts (atomically: racing checks get distinct counts); answers how many are used. */
  async takeAttempt(state: TestSessionState): Promise<number> {
    const taken = await this.store.increment(testSessionAttemptsKey(state.requestId), 1, this.keptMs(state));
    return taken.value;
  }

  /** Ends the session as `end` unless it has ended already: answers the end that stands. */
  async end(state: TestSessionState, end: TestSessionEnd): Promise<RecordedEnd> {
    const key = testSessionEndKey(state.requestId);
    if (await this.store.setIfAbsent(key, JSON.stringify(end), this.keptMs(state))) return { end, won: true };
    // Set by another (an end is never removed while its session is kept).
    return { end: parsedEnd(await this.store.get(key)) ?? end, won: false };
  }

  /** The start stored under a session's key (a spare slot's: whichever session holds it now). */
  private async start(requestId: string): Promise<TestSessionState | null> {
    return this.opened(await this.store.get(testNumberSessionKey(requestId)));
  }

  private opened(stored: string | null): TestSessionState | null {
    const opened = stored === null ? null : this.keys.open(stored);
    return opened === null ? null : (JSON.parse(opened) as TestSessionState);
  }

  /** How long a session's entries are kept: to its end, and past it for late reads. */
  private keptMs(state: TestSessionState): number {
    return Math.max(state.expiresAt - this.store.now(), 0) + RETENTION_MS;
  }
}

function parsedEnd(stored: string | null): TestSessionEnd | null {
  return stored === null ? null : (JSON.parse(stored) as TestSessionEnd);
}

/**
 * Store key of a test number's session start (the module's stand-in for the API's session): a spare
 * session's slot, which the slot's next session overwrites.
 */
export function testNumberSessionKey(requestId: string): string {
  return `test-number:session:{${storedSessionId(requestId)}}`;
}

/** A session's own tag: its stored id in braces (one Redis Cluster slot with its start), then the rest of its id. */
function ownTag(requestId: string): string {
  const stored = storedSessionId(requestId);
  return `{${stored}}${requestId.slice(stored.length)}`;
}

/** Store key of a test session's attempts used (its checks, counted atomically). */
export function testSessionAttemptsKey(requestId: string): string {
  return `test-number:attempts:${ownTag(requestId)}`;
}

/** Store key of a test session's end (set once). */
function testSessionEndKey(requestId: string): string {
  return `test-number:end:${ownTag(requestId)}`;
}

/** The entries of a session kept under its own request id. */
function sideKeys(requestId: string): string[] {
  return [testSessionAttemptsKey(requestId), testSessionEndKey(requestId)];
}

/** Every entry of a test session (an erasure removes them; a spare slot's start only while the session holds it). */
export function testSessionKeys(requestId: string): string[] {
  return [testNumberSessionKey(requestId), ...sideKeys(requestId)];
}
