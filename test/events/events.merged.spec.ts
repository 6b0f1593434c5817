/**
 * Events: every outcome, late events, in-doubt starts and lossy webhooks.
 *
 * Whole suites (the parts below), merged into one spec file so that jest imports Nest, the module and the
 * sandbox once for all of them (CONTRIBUTING.md, "The suite's time budget"). One part alone:
 * `npx jest --testMatch '<rootDir>/test/events/<part>.part.ts'`.
 */
import './in-doubt-starts.e2e.part.js';
import './in-doubt-lagging-store.e2e.part.js';
import './in-doubt-matching.e2e.part.js';
import './in-doubt-window.e2e.part.js';
import './lossy-webhooks-500.e2e.part.js';
import './every-outcome.e2e.part.js';
import './late-events.e2e.part.js';
