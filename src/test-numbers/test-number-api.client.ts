import type { VerificationApiClientOptions } from '../api/api-client.options.js';
import type {
  CheckRequest,
  CheckResult,
  InitiateRequest,
  InitiateResult,
  VerificationSession,
} from '../api/api.types.js';
import { VerificationApiClient } from '../api/verification-api.client.js';
import { isTestSession } from '../core/test-session.js';
import type { TestNumberSessions } from './test-number-sessions.js';
import type { TestStarter } from './test-number-wrong-codes.js';

/**
 * The module's API client when `testNumbers` are configured: a test number's sessions are answered
 * by TestNumberSessions and never reach the API (nothing is sent, nothing is billed); every other
 * call goes to the API as it would without test numbers. One seam for every reader of sessions (the
 * routes, the refresher, the reconciler, recovery, getVerifiedPhone), so a test number's session
 * behaves as a real one does all the way through.
 */
export class TestNumberApiClient extends VerificationApiClient {
  readonly #sessions: TestNumberSessions;

  constructor(options: VerificationApiClientOptions, sessions: TestNumberSessions) {
    super(options);
    this.#sessions = sessions;
  }

  /**
   * A test number's session, played (PaidStart decides who plays one: `initiate` sends every
   * number to the API, a test number started by an owner not on `owners` included).
   */
  play(req: InitiateRequest, starter: TestStarter = {}): Promise<InitiateResult> {
    return this.#sessions.initiate(req, starter);
  }

  /** A real start, whose bot link (msgr2_bot) gives test sessions' links their shape (see `lookalikeLink`). */
  override async initiate(req: InitiateRequest): Promise<InitiateResult> {
    const result = await super.initiate(req);
    if ('deepLink' in result && typeof result.deepLink === 'string')
      await this.#sessions.learnDeepLink(result.deepLink);
    return result;
  }

  override getSession(requestId: string): Promise<VerificationSession> {
    return isTestSession(requestId) ? this.#sessions.getSession(requestId) : super.getSession(requestId);
  }

  override check(req: CheckRequest): Promise<CheckResult> {
    return isTestSession(req.requestId) ? this.#sessions.check(req) : super.check(req);
  }
}
