import { describe, expect, it } from '@jest/globals';
import type { ApiRequestInfo } from '../api/api-client.options.js';
import { createUpstreamRequestObserver } from './upstream-request.observer.js';
import type { VerificationLogger } from './verification-logger.js';
import { VerificationMetrics } from './verification-metrics.js';

type Line = [level: 'warn' | 'debug', message: string, fields: unknown];

/** The log lines one upstream attempt gives the operator, as the module's logger receives them. */
function linesOf(info: ApiRequestInfo): Line[] {
  const lines: Line[] = [];
  const logger = {
    warn: (message: string, fields?: unknown) => void lines.push(['warn', message, fields]),
    debug: (message: string, fields?: unknown) => void lines.push(['debug', message, fields]),
  } as unknown as VerificationLogger;
  createUpstreamRequestObserver(logger, VerificationMetrics.disabled())(info);
  return lines;
}

const attempt = (fields: Partial<ApiRequestInfo>): ApiRequestInfo => ({
  operation: 'initiate',
  method: 'POST',
  path: '/v1/verify',
  durationMs: 12.6,
  attempt: 1,
  willRetry: false,
  ...fields,
});

describe('the upstream request observer: one line an attempt', () => {
  it('a failure the operator must see is a warning with its route, status, latency, attempt, error and retry', () => {
    expect(linesOf(attempt({ status: 503, error: 'http_503', willRetry: true }))).toStrictEqual([
      [
        'warn',
        'upstream request failed',
        {
          operation: 'initiate',
          route: 'POST /v1/verify',
          upstream_status: 503,
          latency_ms: 13,
          attempt: 1,
          error: 'http_503',
          will_retry: true,
        },
      ],
    ]);
  });

  it('no answer at all reads upstream_status none; a last attempt says nothing of a retry', () => {
    const [line] = linesOf(attempt({ method: 'GET', path: '/v1/verify/:request_id', error: 'timeout' }));
    expect(line).toStrictEqual([
      'warn',
      'upstream request failed',
      expect.objectContaining({
        route: 'GET /v1/verify/:request_id',
        upstream_status: 'none',
        error: 'timeout',
      }),
    ]);
    expect((line![2] as Record<string, unknown>).will_retry).toBeUndefined();
  });

  it('an answer that is no failure of the API is a debug line, never a warning', () => {
    expect(linesOf(attempt({ status: 200, durationMs: 3.2, attempt: 2 }))).toStrictEqual([
      [
        'debug',
        'upstream request',
        {
          operation: 'initiate',
          route: 'POST /v1/verify',
          upstream_status: 200,
          latency_ms: 3,
          attempt: 2,
          error: undefined,
          will_retry: undefined,
        },
      ],
    ]);
    // A refusal of the end user's input (400) is the user's, not the operator's.
    expect(linesOf(attempt({ status: 400, error: 'validation_error' }))[0]![0]).toBe('debug');
  });
});
