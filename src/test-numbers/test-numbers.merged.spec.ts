/**
 * The unit specs of src/test-numbers, in one file so that jest starts one file for them (test/merged-parts.mjs). One
 * spec alone: `npx jest --testMatch '<rootDir>/src/test-numbers/<file>.spec.ts'`.
 */
import './spare-slot-claim.spec.js';
import './spare-test-slots.spec.js';
import './test-deep-link.spec.js';
import './test-number-api.client.spec.js';
import './test-number-sessions.spec.js';
import './test-number-wrong-codes.spec.js';
import './test-session-delivery.spec.js';
