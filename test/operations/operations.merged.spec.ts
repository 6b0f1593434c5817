/**
 * Operations: the account, the balance watch, health, logs, figures, metrics and options.
 *
 * Whole suites (the parts below), merged into one spec file so that jest imports Nest, the module and the
 * sandbox once for all of them (CONTRIBUTING.md, "The suite's time budget"). One part alone:
 * `npx jest --testMatch '<rootDir>/test/operations/<part>.part.ts'`.
 */
import './account.e2e.part.js';
import './balance-watch.e2e.part.js';
import './health.e2e.part.js';
import './logs.e2e.part.js';
import './method-stats.e2e.part.js';
import './metrics.e2e.part.js';
import './metrics-time-to-verify.e2e.part.js';
import './options.part.js';
import './unknown-options.part.js';
