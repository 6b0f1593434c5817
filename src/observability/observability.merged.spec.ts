/**
 * The unit specs of src/observability, in one file so that jest starts one file for them (test/merged-parts.mjs). One
 * spec alone: `npx jest --testMatch '<rootDir>/src/observability/<file>.spec.ts'`.
 */
import './log-redaction.spec.js';
import './upstream-request.observer.spec.js';
import './verification-logger.spec.js';
import './verification-metrics.spec.js';
import './verification-telemetry.lines.spec.js';
import './verification-telemetry.spec.js';
