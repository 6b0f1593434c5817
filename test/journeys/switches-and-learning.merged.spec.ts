/**
 * Journeys that switch method, and what they learn.
 *
 * Whole suites (the parts below), merged into one spec file so that jest imports Nest, the module and the
 * sandbox once for all of them (CONTRIBUTING.md, "The suite's time budget"). One part alone:
 * `npx jest --testMatch '<rootDir>/test/journeys/<part>.part.ts'`.
 */
import './journey-ends.e2e.part.js';
import './learned-fallback-record-age.e2e.part.js';
import './learned-fallback.e2e.part.js';
import './learning-steering.e2e.part.js';
import './multi-instance-switch.e2e.part.js';
import './route-rules.e2e.part.js';
import './switch-lease.e2e.part.js';
import './switch-lifetime.e2e.part.js';
import './switch.e2e.part.js';
