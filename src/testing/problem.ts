import { PhoneVerificationError } from '../core/phone-verification.error.js';
/**
 * RFC 7807 problems the sandbox answers with. Handlers throw a `SandboxProblem`; the server turns it into
 * `application/problem+json` with a stable `error_code` (403 goes out without a body, as the spec says).
 */
export class SandboxProblem extends PhoneVerificationError {
  constructor(
    readonly status: number,
    readonly errorCode: string | undefined,
    readonly detail: string,
    /** Extra members of the problem document, e.g. `attempts_remaining`. */
    readonly extra: Record<string, unknown> = {},
    /** Extra response headers, e.g. `Retry-After`. */
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
    this.name = 'SandboxProblem';
  }
}

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  402: 'Payment Required',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  413: 'Payload Too Large',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

export function titleFor(status: number): string {
  return TITLES[status] ?? (status >= 500 ? 'Server Error' : 'Error');
}

/** The problem document's JSON body. */
export function problemBody(problem: SandboxProblem, instance?: string): Record<string, unknown> {
  return {
    type: problem.errorCode ? `https://sandbox.invalid/problems/${problem.errorCode}` : 'about:blank',
    title: titleFor(problem.status),
    status: problem.status,
    detail: problem.detail,
    instance: instance ?? null,
    ...(problem.errorCode ? { error_code: problem.errorCode } : {}),
    ...problem.extra,
  };
}

export const validationError = (detail: string): SandboxProblem =>
  new SandboxProblem(400, 'validation_error', detail);
export const notFound = (detail = 'No such verification session for this account.'): SandboxProblem =>
  new SandboxProblem(404, 'not_found', detail);
export const notPending = (detail: string, extra: Record<string, unknown> = {}): SandboxProblem =>
  new SandboxProblem(409, 'not_pending', detail, extra);
export const forbidden = (): SandboxProblem => new SandboxProblem(403, undefined, 'Forbidden.');
