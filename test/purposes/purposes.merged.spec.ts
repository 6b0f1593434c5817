/**
 * Purposes: the risk hook, methods per purpose, erasure and registrations.
 *
 * Whole suites (the parts below), merged into one spec file so that jest imports Nest, the module and the
 * sandbox once for all of them (CONTRIBUTING.md, "The suite's time budget"). One part alone:
 * `npx jest --testMatch '<rootDir>/test/purposes/<part>.part.ts'`.
 */
import './assess-start.e2e.part.js';
import './methods-per-purpose.e2e.part.js';
import './purpose-erasure.e2e.part.js';
import './purpose-registrations.e2e.part.js';
import './purposes.e2e.part.js';
