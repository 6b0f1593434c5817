import { randomInt, randomUUID } from 'node:crypto';
import type {
  CheckRequest,
  CheckResult,
  InitiateRequest,
  InitiateResult,
  VerificationSession,
} from '../api/api.types.js';
import type { ApiOperation } from '../api/api-client.options.js';
import { VerificationApiError } from '../api/verification-api.error.js';
import { DEFAULT_SESSION_TTL_MS } from '../core/session-record.js';
import { TEST_SESSION_PREFIX, isTestSession, storedSessionId } from '../core/test-session.js';
import { methodTraits } from '../core/verification-method.js';
import { isTerminal } from '../core/verification-status.js';
import type { ResolvedVerificationOptions } from '../options/verification.options.js';
import type { VerificationStore } from '../store/verification-store.interface.js';
import type { SlotHolder } from './spare-test-slots.js';
import { takeSpareSlot, type TakenSlot } from './spare-slot-claim.js';
import { TestNumberBook, type TestNumberEntry } from './test-number-book.js';
import { delivered, played, toSession, type TestSessionState } from './test-session-state.js';
import {
  starterTags,
  takeWrongCodePoints,
  wrongCodeBudgets,
  type TestStarter,
} from './test-number-wrong-codes.js';
import {
  DEEP_LINK_TEMPLATE_KEY,
  DEEP_LINK_TEMPLATE_TTL_MS,
  TEST_DEEP_LINK,
  lookalikeLink,
} from './test-deep-link.js';

/** The `code_length` a real reverse flash call session states. */
const REVERSE_CALL_CODE_LENGTH = 4;

/**
 * What a frontend is shown to call for a test session (reverse flash call): shaped like a gateway
 * number of a real session (`+7800` and seven digits, a new one per session), so that the answer
 * does not tell a test number from a real one; a call to it verifies nothing.
 */
export function testNumberToCall(): string {
  return `+7800${String(randomInt(10_000_000)).padStart(7, '0')}`;
}

/**
 * A test session's request id: the prefix and the rest of a GUID, as long as the API's ids (a GUID, 36
 * characters), so that its sealed `verification_id` and `journey_token` are as long as a real session's.
 */
export function testRequestId(): string {
  return `${TEST_SESSION_PREFIX}${randomUUID().slice(TEST_SESSION_PREFIX.length)}`;
}

/**
 * Test sessions of one number a client network (an IPv4 /24, an IPv6 /48) keeps per hour; its further
 * ones are spare: played alike, but stored in one of the network's SPARE_TEST_SESSION_SLOTS (see
 * `chooseSpareSlot`, `storedSessionId`), so that a flood of test starts keeps a bounded amount per network
 * on every store.
 */
export const KEPT_TEST_SESSIONS_PER_NETWORK_HOUR = 5;

/**
 * Test sessions of one number kept per hour across every network; further ones are spare in the
 * number's own SPARE_TEST_SESSION_SLOTS, so a flood from many networks keeps a bounded amount per number.
 */
export const KEPT_TEST_SESSIONS_PER_NUMBER_HOUR = 2 * KEPT_TEST_SESSIONS_PER_NETWORK_HOUR;

/** How long a test session is kept past its end, for late reads (the reconciler's grace, a status page). */
const RETENTION_MS = 3_600_000;

/**
 * The API's side of test numbers' sessions, played by the module in the store (so every instance
 * sees the same session): initiate, read and check answer as the API would, with the number's fixed
 * code and outcome, and no money. The API's attempts per session hold (`maxAttempts`), and wrong
 * codes are also counted per number across its sessions (`wrongCodesPerNumber`): new sessions do not
 * buy new guesses.
 */
export class TestNumberSessions {
  readonly book: TestNumberBook;

  /** Made by the module's API client provider, its only user (see TestNumberApiClient). */
  constructor(
    private readonly options: ResolvedVerificationOptions,
    private readonly store: VerificationStore,
  ) {
    this.book = new TestNumberBook(options.testNumbers);
  }

  async initiate(request: InitiateRequest, starter: TestStarter = {}): Promise<InitiateResult> {
    const entry = this.entry(request.phoneNumber, 'initiate');
    const { network } = starter;
    // With `owners`, only a listed owner plays a test number: its hard ceiling is its own.
    const listed = this.options.testNumbers.owners !== undefined;
    const tags = starterTags(this.options.dataKeys, { ...starter, listed });
    const taken: TakenSlot =
      network === undefined
        ? { requestId: testRequestId(), replaced: false }
        : await this.newId(entry.phoneNumber, network, tags.startedBy);
    const { requestId, replaced } = taken;
    const now = this.store.now();
    const ttlMs = request.expirySeconds === undefined ? DEFAULT_SESSION_TTL_MS : request.expirySeconds * 1000;
    const traits = methodTraits(request.method);
    const state: TestSessionState = {
      requestId,
      phoneNumber: entry.phoneNumber,
      method: request.method,
      status: 'sent',
      awaitingCode: false,
      createdAt: now,
      expiresAt: now + ttlMs,
      verifiedAt: null,
      attemptsLeft: this.options.testNumbers.maxAttempts,
      played: false,
      ...tags,
      ...(replaced ? { replaced } : {}),
    };
    try {
      // A slot's former session's checks are not this one's.
      if (storedSessionId(requestId) !== requestId)
        await this.store.delete(testSessionAttemptsKey(requestId));
      await this.save(state);
    } finally {
      // Its session is in the slot: whoever reads the slot now reads it.
      await taken.release?.();
    }
    return {
      requestId: state.requestId,
      phoneNumber: state.phoneNumber,
      method: request.method,
      status: state.status,
      expiresAt: new Date(state.expiresAt),
      // A number without a code (an outcome alone) states the length a real session of the method would.
      ...(traits.codeEntry === 'always'
        ? { codeLength: entry.code?.length ?? (request.method === 'flash_call' ? 4 : 6) }
        : {}),
      // As a real session's: the gateway number and its `code_length` (the spec gives one for this method too).
      ...(request.method === 'reverse_flash_call'
        ? { numberToCall: testNumberToCall(), codeLength: REVERSE_CALL_CODE_LENGTH }
        : {}),
      ...(request.method === 'msgr2_bot' ? { deepLink: await this.deepLink() } : {}),
      ...(request.method === 'operator_id' ? { awaitingCode: false } : {}),
    } as InitiateResult;
  }

  /**
   * A new test session's id: its own within both the number's hourly count of kept sessions (across every
   * network) and its network's; past the number's, a spare one in the number's next slot; past only the
   * network's, a spare one in the network's next slot (and the number's count given back). A network's
   * counter is taken only while the number is under its count, so a flood from many networks keeps a
   * bounded amount per number (the counters are evictable). Which slot: see `chooseSpareSlot`.
   */
  private async newId(
    phoneNumber: string,
    network: string,
    startedBy: string | undefined,
  ): Promise<TakenSlot> {
    const keys = this.options.dataKeys;
    const numberPool = keys.digest(phoneNumber);
    const numberKey = `test-number:kept:${numberPool}`;
    const taken = await this.store.increment(numberKey, 1, 3_600_000, { evictable: true });
    if (taken.value > KEPT_TEST_SESSIONS_PER_NUMBER_HOUR) return this.spare(numberPool, startedBy);
    const pool = keys.digest(`${phoneNumber}|${network}`);
    const { value } = await this.store.increment(`test-number:kept:${pool}`, 1, 3_600_000, {
      evictable: true,
    });
    if (value <= KEPT_TEST_SESSIONS_PER_NETWORK_HOUR) return { requestId: testRequestId(), replaced: false };
    await this.store.increment(numberKey, -1, 3_600_000, { evictable: true });
    return this.spare(pool, startedBy);
  }

  /** A new spare session's id in the slot of `pool` its starter may take (see `takeSpareSlot`). */
  private spare(pool: string, startedBy: string | undefined): Promise<TakenSlot> {
    return takeSpareSlot(this.store, pool, startedBy, async (slotId): Promise<SlotHolder | null> => {
      const stored = await this.store.get(testNumberSessionKey(slotId));
      const opened = stored === null ? null : this.options.dataKeys.open(stored);
      return opened === null ? null : (JSON.parse(opened) as TestSessionState);
    });
  }

  /**
   * Keeps a real session's bot link as the shape of test sessions' (its start token already replaced:
   * nothing of a real session is kept). A store failure costs only the shape, never the real start.
   */
  async learnDeepLink(realLink: string): Promise<void> {
    const template = lookalikeLink(realLink);
    if (template === undefined) return;
    await this.store.set(DEEP_LINK_TEMPLATE_KEY, template, DEEP_LINK_TEMPLATE_TTL_MS).catch(() => undefined);
  }

  /** A test session's bot link: the last real one's shape with a fresh token, else one that opens nothing. */
  private async deepLink(): Promise<string> {
    const template = await this.store.get(DEEP_LINK_TEMPLATE_KEY).catch(() => null);
    return (template === null ? undefined : lookalikeLink(template)) ?? TEST_DEEP_LINK;
  }

  async getSession(requestId: string): Promise<VerificationSession> {
    const state = await this.current(requestId, 'getSession');
    return toSession(state);
  }

  async check(request: CheckRequest): Promise<CheckResult> {
    const state = await this.current(request.requestId, 'check');
    if (isTerminal(state.status))
      throw apiError('check', 409, 'not_pending', 'The verification is no longer pending');
    // As the API: an operator_id session takes a code only after its fallback; no point is spent.
    if (state.method === 'operator_id' && !state.awaitingCode)
      throw apiError('check', 409, 'not_pending', 'No code is due before the fallback');
    const entry = this.entry(state.phoneNumber, 'check');
    // The session's attempt is taken atomically before anything is compared (concurrent checks of one
    // session, on one instance or several, get distinct counts): past its attempts it has ended.
    const used = (await this.store.increment(testSessionAttemptsKey(state.requestId), 1, this.keptMs(state)))
      .value;
    const left = state.attemptsLeft - used;
    // (Its last allowed attempt ends it, verified or failed.)
    if (left < 0) throw apiError('check', 409, 'not_pending', 'The verification is no longer pending');
    // The wrong-code points (see `wrongCodeBudgets`) are taken before the comparison, atomically
    // (instances racing get distinct counts); past any of them no code is compared: the session ends as
    // if out of attempts.
    const points = await takeWrongCodePoints(
      this.store,
      wrongCodeBudgets(
        this.options.dataKeys,
        this.options.testNumbers.wrongCodesPerNumber,
        this.options.testNumbers.maxAttempts,
        state,
      ),
    );
    const spent = points.spent;
    // Its holder has shown up: no stranger's start takes its slot (see `chooseSpareSlot`).
    if (state.checked !== true) await this.save({ ...state, checked: true });
    if (!spent && this.book.codeMatches(entry, request.code)) {
      // The right code costs nothing: its points go back.
      await points.giveBack();
      await this.save({ ...state, status: 'verified', verifiedAt: this.store.now(), awaitingCode: false });
      return { requestId: state.requestId, status: 'verified', phoneNumber: state.phoneNumber };
    }
    const attemptsLeft = spent ? 0 : left;
    // The stored `attemptsLeft` stays the session's own allowance; the counter says what was used.
    if (attemptsLeft <= 0) {
      // Read again: a right code racing this one may have ended the session verified meanwhile.
      const now = await this.current(state.requestId, 'check');
      if (!isTerminal(now.status)) await this.save({ ...now, status: 'failed' });
    }
    throw apiError('check', 400, 'invalid_code', 'The code is not correct', {
      attempts_remaining: attemptsLeft,
    });
  }

  /** The session as it stands now: past its end it has expired; at its first read it plays the number's outcome. */
  private async current(requestId: string, operation: ApiOperation): Promise<TestSessionState> {
    const stored = isTestSession(requestId) ? await this.store.get(testNumberSessionKey(requestId)) : null;
    const opened = stored === null ? null : this.options.dataKeys.open(stored);
    let state = opened === null ? null : (JSON.parse(opened) as TestSessionState);
    // A spare session whose slot a newer one took: gone, as an expired record is.
    if (state?.requestId !== requestId) throw apiError(operation, 404, 'not_found', 'Verification not found');
    const now = this.store.now();
    if (!isTerminal(state.status) && state.expiresAt <= now) state = { ...state, status: 'expired' };
    else if (!state.played && !isTerminal(state.status))
      state = played(state, this.book.find(state.phoneNumber), now);
    state = delivered(state, this.options.dataKeys, now);
    if (opened !== JSON.stringify(state)) await this.save(state);
    return state;
  }

  private entry(phoneNumber: string, operation: ApiOperation): TestNumberEntry {
    const entry = this.book.find(phoneNumber);
    // A number taken out of testNumbers since its session began: gone, as far as anyone may tell.
    if (entry === undefined) throw apiError(operation, 404, 'not_found', 'Verification not found');
    return entry;
  }

  /** How long a session's keys are kept: to its end, and past it for late reads. */
  private keptMs(state: TestSessionState): number {
    return Math.max(state.expiresAt - this.store.now(), 0) + RETENTION_MS;
  }

  private async save(state: TestSessionState): Promise<void> {
    const ttl = this.keptMs(state);
    // Sealed: the state names the number (a reviewer's may be a real one).
    await this.store.set(
      testNumberSessionKey(state.requestId),
      this.options.dataKeys.seal(JSON.stringify(state)),
      ttl,
    );
  }
}

/** Store key of a test number's session (the module's stand-in for the API's). */
export function testNumberSessionKey(requestId: string): string {
  return `test-number:session:{${storedSessionId(requestId)}}`;
}

function apiError(
  operation: ApiOperation,
  status: number,
  code: string,
  title: string,
  extra: Record<string, unknown> = {},
): VerificationApiError {
  return new VerificationApiError({
    operation,
    status,
    problem: { status, title, error_code: code, ...extra },
  });
}

/** Store key of a test session's attempts used (its checks, counted atomically). */
export function testSessionAttemptsKey(requestId: string): string {
  return `test-number:attempts:{${storedSessionId(requestId)}}`;
}
