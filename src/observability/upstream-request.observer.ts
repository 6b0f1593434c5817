import type { ApiRequestInfo } from '../api/api-client.options.js';
import type { VerificationLogger } from './verification-logger.js';
import { isUpstreamFailure, type VerificationMetrics } from './verification-metrics.js';

/**
 * The API client's `onRequest` hook: each attempt's latency (and failure) to the metrics, and one
 * log line: a warning for a failure the operator must see (no answer, 5xx, 401/402/403/429), debug
 * otherwise. The info carries no ids, phone numbers or headers, only the route template.
 */
export function createUpstreamRequestObserver(
  logger: VerificationLogger,
  metrics: VerificationMetrics,
): (info: ApiRequestInfo) => void {
  return (info) => {
    metrics.upstreamRequest(info);
    const fields = {
      operation: info.operation,
      route: `${info.method} ${info.path}`,
      upstream_status: info.status ?? 'none',
      latency_ms: Math.round(info.durationMs),
      attempt: info.attempt,
      error: info.error,
      will_retry: info.willRetry || undefined,
    };
    if (isUpstreamFailure(info)) logger.warn('upstream request failed', fields);
    else logger.debug('upstream request', fields);
  };
}
