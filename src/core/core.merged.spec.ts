/**
 * The unit specs of src/core, in one file so that jest starts one file for them (test/merged-parts.mjs). One
 * spec alone: `npx jest --testMatch '<rootDir>/src/core/<file>.spec.ts'`.
 */
import './client-address.mutation.spec.js';
import './client-address.spec.js';
import './client-request.spec.js';
import './clock.spec.js';
import './data-keys.spec.js';
import './digest.spec.js';
import './duration-histogram.spec.js';
import './error-text.spec.js';
import './fallback-moment.spec.js';
import './iso-time.spec.js';
import './journey.edges.spec.js';
import './journey.spec.js';
import './method-ranking.spec.js';
import './module-not-found.spec.js';
import './moment-damping.spec.js';
import './money.spec.js';
import './oldest-first.spec.js';
import './operator-prefix.spec.js';
import './option-rules.spec.js';
import './phone-mask.spec.js';
import './phone-number.spec.js';
import './phone-verification.error.spec.js';
import './refusal-reason.mutation.spec.js';
import './refusal-reason.spec.js';
import './refusal-reason.waits.spec.js';
import './session-record.spec.js';
import './session-record.stored.spec.js';
import './shared-reads.spec.js';
import './test-session.spec.js';
import './verification-code.spec.js';
import './verification-events.spec.js';
import './verification-handle.codec.spec.js';
import './verification-method.spec.js';
import './verification-status.spec.js';
import './verification.errors.spec.js';
