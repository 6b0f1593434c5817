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
import { TEST_SESSION_PREFIX, isTestSession } from '../core/test-session.js';
import { methodTraits } from '../core/verification-method.js';
import { isTerminal } from '../core/verification-status.js';
import type { ResolvedVerificationOptions } from '../options/verification.options.js';
import type { VerificationStore } from '../store/verification-store.interface.js';
import { takeSpareSlot, type TakenSlot } from './spare-slot-claim.js';
import { TestNumberBook, type TestNumberEntry } from './test-number-book.js';
import {
  asked,
  delivered,
  ended,
  outcomeEnd,
  toSession,
  type TestSessionState,
} from './test-session-state.js';
import { TestSessionStore } from './test-session-store.js';
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

/**
 * The API's side of test numbers' sessions, played by the module in the store (so every instance
 * sees the same session): initiate, read and check answer as the API would, with the number's fixed
 * code and outcome, and no money. The API's attempts per session hold (`maxAttempts`), and wrong
 * codes are also counted per number across its sessions (`wrongCodesPerNumber`): new sessions do not
 * buy new guesses.
 */
export class TestNumberSessions {
  readonly book: TestNumberBook;
  readonly #sessions: TestSessionStore;

  /** Made by the module's API client provider, its only user (see TestNumberApiClient). */
  constructor(
    private readonly options: ResolvedVerificationOptions,
    private readonly store: VerificationStore,
  ) {
    this.book = new TestNumberBook(options.testNumbers);
    this.#sessions = new TestSessionStore(store, options.dataKeys);
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
    const traits = methodTraits(request.method);
    const state: TestSessionState = {
      requestId,
      phoneNumber: entry.phoneNumber,
      method: request.method,
      status: 'sent',
      awaitingCode: false,
      createdAt: now,
      expiresAt: now + this.options.sessionTtlMs,
      verifiedAt: null,
      attemptsLeft: this.options.testNumbers.maxAttempts,
      ...tags,
      ...(replaced ? { replaced } : {}),
    };
    try {
      await this.#sessions.create(state);
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
    return takeSpareSlot(this.store, pool, startedBy, (slotId) => this.#sessions.slotHolder(slotId));
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
    if (isTerminal(state.status)) throw notPending();
    // As the API: a code that is asked for (a bot's once the user shared the number, the operator's at
    // its fallback) is refused before it was, as too early; no attempt is spent.
    if (methodTraits(state.method).codeAwaited === 'when_api_says' && !state.awaitingCode)
      throw apiError('check', 409, 'not_pending', 'No code was asked for yet');
    const entry = this.entry(state.phoneNumber, 'check');
    // The session's attempt is taken atomically before anything is compared (concurrent checks of one
    // session, on one instance or several, get distinct counts): past its attempts it has ended.
    const left = state.attemptsLeft - (await this.#sessions.takeAttempt(state));
    // (Its last allowed attempt ends it, verified or failed.)
    if (left < 0) throw notPending();
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
    if (!spent && this.book.codeMatches(entry, request.code)) {
      // The right code costs nothing: its points go back.
      await points.giveBack();
      // Unless a racing check ended it first (its last wrong code, or the same code): resolved, as the API says.
      const { won } = await this.#sessions.end(state, { status: 'verified', verifiedAt: this.store.now() });
      if (!won) throw notPending();
      return { requestId: state.requestId, status: 'verified', phoneNumber: state.phoneNumber };
    }
    const attemptsLeft = spent ? 0 : left;
    // Its last attempt fails it, unless a racing check ended it first (a verified end stands).
    if (attemptsLeft <= 0) await this.#sessions.end(state, { status: 'failed', verifiedAt: null });
    throw apiError('check', 400, 'invalid_code', 'The code is not correct', {
      attempts_remaining: attemptsLeft,
    });
  }

  /**
   * The session as it stands now: past its end it has expired; from its first read it plays the number's
   * outcome (an ending one is recorded then, once). Nothing else is written: a read never writes over a
   * check's end, nor a session whose spare slot a newer one took.
   */
  private async current(requestId: string, operation: ApiOperation): Promise<TestSessionState> {
    const stored = isTestSession(requestId) ? await this.#sessions.read(requestId) : null;
    // Unknown, or a spare session whose slot a newer one took: gone, as an expired record is.
    if (stored === null) throw apiError(operation, 404, 'not_found', 'Verification not found');
    const now = this.store.now();
    let state = stored;
    if (!isTerminal(state.status) && state.expiresAt <= now) state = { ...state, status: 'expired' };
    else if (!isTerminal(state.status)) {
      const entry = this.book.find(state.phoneNumber);
      const end = outcomeEnd(entry, now);
      if (end === undefined) state = asked(state, entry);
      else {
        state = ended(state, (await this.#sessions.end(state, end)).end);
      }
    }
    return delivered(state, this.options.dataKeys, now);
  }

  private entry(phoneNumber: string, operation: ApiOperation): TestNumberEntry {
    const entry = this.book.find(phoneNumber);
    // A number taken out of testNumbers since its session began: gone, as far as anyone may tell.
    if (entry === undefined) throw apiError(operation, 404, 'not_found', 'Verification not found');
    return entry;
  }
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

function notPending(): VerificationApiError {
  return apiError('check', 409, 'not_pending', 'The verification is no longer pending');
}
