/**
 * The unit specs of src/verification, in one file so that jest starts one file for them (test/merged-parts.mjs). One
 * spec alone: `npx jest --testMatch '<rootDir>/src/verification/<file>.spec.ts'`.
 */
import './check-refusal.spec.js';
import './erasure-keys.spec.js';
import './fallback-damping.spec.js';
import './fallback-timing.moments.spec.js';
import './fallback-timing.spec.js';
import './first-method.chooser.spec.js';
import './first-method.reorder.spec.js';
import './in-doubt-starts.adopt.spec.js';
import './orchestration.plans.spec.js';
import './orchestration.policy.spec.js';
import './status-watcher.spec.js';
import './upstream-error.mapper.spec.js';
