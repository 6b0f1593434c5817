/**
 * The webhook route: answers, content types, notices, options and unsigned webhooks.
 *
 * Whole suites (the parts below), merged into one spec file so that jest imports Nest, the module and the
 * sandbox once for all of them (CONTRIBUTING.md, "The suite's time budget"). One part alone:
 * `npx jest --testMatch '<rootDir>/test/webhooks/<part>.part.ts'`.
 */
import './content-types.e2e.part.js';
import './webhook-answers.e2e.part.js';
import './webhook-lease.e2e.part.js';
import './webhook-notices.e2e.part.js';
import './webhook-options.e2e.part.js';
import './webhook-route.e2e.part.js';
import './webhook-unsigned.e2e.part.js';
