/**
 * Sessions: restarts of journeys and hosts, the verified phone.
 *
 * Whole suites (the parts below), merged into one spec file so that jest imports Nest, the module and the
 * sandbox once for all of them (CONTRIBUTING.md, "The suite's time budget"). One part alone:
 * `npx jest --testMatch '<rootDir>/test/sessions/<part>.part.ts'`.
 */
import './journey-owner.e2e.part.js';
import './journey-restart.e2e.part.js';
import './journey-token-lease.e2e.part.js';
import './journey-token-twins.e2e.part.js';
import './restart-recovery.e2e.part.js';
import './verified-phone.e2e.part.js';
