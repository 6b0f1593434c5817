/**
 * The unit specs of src/sessions, in one file so that jest starts one file for them (test/merged-parts.mjs). One
 * spec alone: `npx jest --testMatch '<rootDir>/src/sessions/<file>.spec.ts'`.
 */
import './reconcile-queue.spec.js';
import './session-record.repository.lifetimes.spec.js';
import './session-record.repository.spec.js';
import './session-refresher.spec.js';
import './subject-index.spec.js';
import './verification.tracker.counts.spec.js';
import './verification.tracker.events.spec.js';
import './verification.tracker.failures.spec.js';
import './verification.tracker.owed.spec.js';
import './verification.tracker.slow-listener.spec.js';
import './verification.tracker.spec.js';
