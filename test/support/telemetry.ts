import type { EventEmitter2 } from '@nestjs/event-emitter';
import { VerificationLogger } from '../../src/observability/verification-logger.js';
import { VerificationMetrics } from '../../src/observability/verification-metrics.js';
import { VerificationTelemetry } from '../../src/observability/verification-telemetry.js';
import type { ResolvedVerificationOptions } from '../../src/options/verification.options.js';

/**
 * What a spec that builds a part by hand gives it for the module's observability: the logger it
 * watches (or a silent one for `options`), metrics off unless it passes its own, and the emitter its ops
 * events go to.
 */
export function telemetryOf(
  logger: VerificationLogger | ResolvedVerificationOptions,
  metrics: VerificationMetrics = VerificationMetrics.disabled(),
  emitter?: EventEmitter2,
): VerificationTelemetry {
  if (logger instanceof VerificationLogger) return new VerificationTelemetry(logger, metrics, emitter);
  const lines = new VerificationLogger({ ...logger, logLevels: false });
  return new VerificationTelemetry(lines, metrics, emitter, logger);
}
