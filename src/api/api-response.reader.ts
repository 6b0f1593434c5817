import type { ApiOperation } from './api-client.options.js';
import { isWireObject, toProblem } from './api.mapper.js';
import type { HttpAnswer } from './http-transport.js';
import { parseRetryAfter } from './retry-policy.js';
import { VerificationApiError, VerificationApiUnavailableError } from './verification-api.error.js';
import { WireFormatError } from './wire-format.error.js';

/**
 * How one exchange with the API reads: an answer becomes the mapped value or a typed error
 * (VerificationApiError for a definite refusal, VerificationApiUnavailableError for anything
 * unusable), and a thrown transport error becomes an unavailability with a safe code only.
 */

export type ApiError = VerificationApiError | VerificationApiUnavailableError;

export interface Call<T> {
  operation: ApiOperation;
  method: 'GET' | 'POST';
  /** Route template reported to the hook (no ids). */
  route: string;
  /** Path and query after the base address, ids encoded. */
  path: string;
  data?: unknown;
  map: (body: unknown) => T;
}

export type Outcome<T> =
  { ok: true; status: number; value: T } | { ok: false; status?: number; error: ApiError };

export function unavailableFromThrown(
  operation: ApiOperation,
  err: unknown,
): VerificationApiUnavailableError {
  const raw = isWireObject(err) ? err.code : undefined;
  const code = typeof raw === 'string' && /^[A-Z0-9_]{1,40}$/.test(raw) ? raw : undefined;
  if (code === 'ETIMEDOUT') {
    return new VerificationApiUnavailableError({ operation, reason: 'timeout', code: 'ETIMEDOUT' });
  }
  if (
    code === 'ERR_BODY_TOO_LARGE' ||
    code === 'ERR_FR_MAX_BODY_LENGTH_EXCEEDED' ||
    code === 'ERR_BAD_RESPONSE'
  ) {
    return new VerificationApiUnavailableError({ operation, reason: 'bad_response', code });
  }
  return new VerificationApiUnavailableError({ operation, reason: 'network', code });
}

/** Parses the body as JSON unless it is HTML or empty; undefined when it is not JSON. */
function parseBody(data: unknown, contentType: string): unknown {
  if (typeof data !== 'string' || data.trim() === '' || /html/i.test(contentType)) return undefined;
  try {
    return JSON.parse(data) as unknown;
  } catch {
    return undefined;
  }
}

export function readResponse<T>(call: Call<T>, response: HttpAnswer): Outcome<T> {
  const { status } = response;
  const operation = call.operation;
  const contentType = String(response.headers['content-type'] ?? '');
  const body = parseBody(response.body, contentType);
  if (status >= 200 && status < 300) {
    if (body === undefined) {
      const detail = /html/i.test(contentType) ? 'HTML body' : 'body is not JSON';
      return {
        ok: false,
        status,
        error: new VerificationApiUnavailableError({ operation, reason: 'bad_response', status, detail }),
      };
    }
    try {
      return { ok: true, status, value: call.map(body) };
    } catch (err) {
      // Any mapping failure means the body is unusable; only WireFormatError's message is known to be safe.
      const detail = err instanceof WireFormatError ? err.message : 'unreadable body';
      return {
        ok: false,
        status,
        error: new VerificationApiUnavailableError({ operation, reason: 'bad_response', status, detail }),
      };
    }
  }
  const problem = toProblem(body);
  const retryAfterMs = parseRetryAfter(response.headers['retry-after']);
  if (problem || status === 429) {
    // A 429 is a definite answer even without a problem document.
    return {
      ok: false,
      status,
      error: new VerificationApiError({ operation, status, problem, retryAfterMs }),
    };
  }
  const emptyBody = response.body.trim() === '';
  const reason = status === 403 && emptyBody ? 'forbidden' : 'bad_response';
  const detail =
    reason === 'forbidden' ? undefined : emptyBody ? 'empty body' : 'body is not a problem document';
  return {
    ok: false,
    status,
    error: new VerificationApiUnavailableError({ operation, reason, status, detail }),
  };
}

export function errorLabel(error: ApiError): string {
  if (error instanceof VerificationApiError) return error.errorCode ?? `http_${error.status}`;
  return error.reason;
}
