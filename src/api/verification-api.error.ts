import { PhoneVerificationError } from '../core/phone-verification.error.js';
import type { ApiOperation } from './api-client.options.js';
import type { ProblemWire } from './api.wire.js';
import { errorText } from '../core/error-text.js';

/**
 * Errors of VerificationApiClient. Both are built fresh from safe values only: no request config,
 * headers, URL or credentials in the message, the properties, `toJSON()`, a `cause` or the stack.
 */

/** The API answered with a problem document (or a bare 429): a usable, definite answer. */
export class VerificationApiError extends PhoneVerificationError {
  readonly operation: ApiOperation;
  /** HTTP status of the answer. */
  readonly status: number;
  /** The problem's stable `error_code` (absent for 401 and for a 429 without a body). */
  readonly errorCode: string | undefined;
  readonly title: string | undefined;
  readonly detail: string | undefined;
  /** From `attempts_remaining` (`invalid_code`). */
  readonly attemptsRemaining: number | undefined;
  /** From the `Retry-After` header, in ms. */
  readonly retryAfterMs: number | undefined;
  /** The problem document as received (a copy). */
  readonly problem: ProblemWire | undefined;

  constructor(init: {
    operation: ApiOperation;
    status: number;
    problem?: ProblemWire;
    retryAfterMs?: number;
  }) {
    const problem = init.problem ? { ...init.problem } : undefined;
    const errorCode = typeof problem?.error_code === 'string' ? problem.error_code : undefined;
    super(
      `Verification API ${init.operation} failed: HTTP ${init.status}` + (errorCode ? ` ${errorCode}` : ''),
    );
    this.operation = init.operation;
    this.status = init.status;
    this.errorCode = errorCode;
    this.title = typeof problem?.title === 'string' ? problem.title : undefined;
    this.detail = typeof problem?.detail === 'string' ? problem.detail : undefined;
    const attempts = problem?.attempts_remaining;
    this.attemptsRemaining = typeof attempts === 'number' && Number.isFinite(attempts) ? attempts : undefined;
    this.retryAfterMs = init.retryAfterMs;
    this.problem = problem;
  }

  toJSON(): Record<string, unknown> {
    return {
      name: this.name,
      message: this.message,
      operation: this.operation,
      status: this.status,
      errorCode: this.errorCode,
      title: this.title,
      detail: this.detail,
      attemptsRemaining: this.attemptsRemaining,
      retryAfterMs: this.retryAfterMs,
      problem: this.problem,
    };
  }
}

/**
 * Why no usable answer came: `timeout` (no answer within timeoutMs), `network` (refused, reset, DNS...),
 * `bad_response` (non-JSON, HTML or empty body, or a 2xx body missing its identity fields),
 * `forbidden` (403 with no body, as the spec describes it).
 */
export type UnavailableReason = 'timeout' | 'network' | 'bad_response' | 'forbidden';

/** No usable answer from the API. The outcome of a POST that ended this way is unknown. */
export class VerificationApiUnavailableError extends PhoneVerificationError {
  readonly operation: ApiOperation;
  readonly reason: UnavailableReason;
  /** HTTP status when an answer arrived but was unusable. */
  readonly status: number | undefined;
  /** Low-level code, e.g. `ECONNREFUSED`, `ECONNRESET`, `ETIMEDOUT`. */
  readonly code: string | undefined;

  constructor(init: {
    operation: ApiOperation;
    reason: UnavailableReason;
    status?: number;
    code?: string;
    detail?: string;
  }) {
    const parts: string[] = [init.reason];
    if (init.status !== undefined) parts.push(`HTTP ${init.status}`);
    if (init.code) parts.push(init.code);
    if (init.detail) parts.push(init.detail);
    super(`Verification API ${init.operation}: no usable answer (${parts.join(', ')})`);
    this.operation = init.operation;
    this.reason = init.reason;
    this.status = init.status;
    this.code = init.code;
  }

  toJSON(): Record<string, unknown> {
    return {
      name: this.name,
      message: this.message,
      operation: this.operation,
      reason: this.reason,
      status: this.status,
      code: this.code,
    };
  }
}

/**
 * Whether a POST that failed with `error` may still have been processed by the API: true for a
 * time-out, a reset or an unreadable answer; false when the API answered (a problem document, which
 * the spec says is never charged, or a bodiless 403) or the connection was refused (nothing was sent).
 */
export function mayHaveBeenProcessed(error: unknown): boolean {
  if (error instanceof VerificationApiError) return false;
  return !(
    error instanceof VerificationApiUnavailableError &&
    (error.reason === 'forbidden' || error.code === 'ECONNREFUSED')
  );
}

/** The calls about one session, its request id in the path or the body. */
const SESSION_OPERATIONS: ReadonlySet<ApiOperation> = new Set<ApiOperation>(['getSession', 'check']);

/**
 * Whether an upstream answer says the API does not know a session: a 404 to a call about one
 * session. A 404 to any other call (a start, prices, balance, usage) says the module calls a route
 * that is not there, a wrong `api.baseUrl`: an outage, not an answer.
 */
export function isUnknownSession(operation: ApiOperation, status: number | undefined): boolean {
  return status === 404 && SESSION_OPERATIONS.has(operation);
}

/** A short, secret-free description of an upstream failure for the operator's log. */
export function describeUpstreamError(error: unknown): string {
  if (error instanceof VerificationApiError)
    return `upstream ${error.operation} answered ${error.status}${error.errorCode ? ` ${error.errorCode}` : ''}`;
  if (error instanceof VerificationApiUnavailableError)
    return `upstream ${error.operation} unavailable (${error.reason}${error.code ? ` ${error.code}` : ''})`;
  return error === undefined || error === null ? 'unknown error' : errorText(error);
}
