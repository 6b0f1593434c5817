/**
 * The unit specs of src/protection, in one file so that jest starts one file for them (test/merged-parts.mjs). One
 * spec alone: `npx jest --testMatch '<rootDir>/src/protection/<file>.spec.ts'`.
 */
import './assess-start-hook.spec.js';
import './before-start-hook.spec.js';
import './open-spend.spec.js';
import './price-estimator.spec.js';
import './proof-reserve.spec.js';
import './protection-events.spec.js';
import './protection-hold.spec.js';
import './request-rate-limits.free-starts.spec.js';
import './request-rate-limits.spec.js';
import './resend-cooldown.spec.js';
import './spend-cap.properties.spec.js';
import './spend-cap.refusals.spec.js';
import './spend-cap.reserve.spec.js';
import './spend-cap.spec.js';
import './spend-evidence.spec.js';
import './start-callers.spec.js';
import './start-coalescer.spec.js';
import './start-coalescer.waits.spec.js';
import './start-hooks.spec.js';
import './status-read-meter.network.spec.js';
import './status-read-meter.spec.js';
import './wrong-code-budget.spec.js';
