/**
 * The ledger, on one instance and several.
 *
 * Whole suites (the parts below), merged into one spec file so that jest imports Nest, the module and the
 * sandbox once for all of them (CONTRIBUTING.md, "The suite's time budget"). One part alone:
 * `npx jest --testMatch '<rootDir>/test/ledger/<part>.part.ts'`.
 */
import './ledger.e2e.part.js';
import './ledger-instances.e2e.part.js';
import './ledger-store-lag.e2e.part.js';
import './ledger-switch.e2e.part.js';
import './ledger-usage-days.e2e.part.js';
