/**
 * The sandbox: its API, account, billing, control, errors, faults, limits, methods, population and webhooks.
 *
 * Whole suites (the parts below), merged into one spec file so that jest imports Nest, the module and the
 * sandbox once for all of them (CONTRIBUTING.md, "The suite's time budget"). One part alone:
 * `npx jest --testMatch '<rootDir>/test/sandbox/<part>.part.ts'`.
 */
import './account-endpoints.part.js';
import './billing.part.js';
import './control-client.part.js';
import './control.part.js';
import './core.part.js';
import './errors.part.js';
import './faults.part.js';
import './fuzz.part.js';
import './limits.part.js';
import './methods.part.js';
import './population.part.js';
import './transitions.part.js';
import './usage.part.js';
import './webhooks.part.js';
