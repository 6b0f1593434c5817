/**
 * Journeys that start on their own, and cancels.
 *
 * Whole suites (the parts below), merged into one spec file so that jest imports Nest, the module and the
 * sandbox once for all of them (CONTRIBUTING.md, "The suite's time budget"). One part alone:
 * `npx jest --testMatch '<rootDir>/test/journeys/<part>.part.ts'`.
 */
import './auto-operator.e2e.part.js';
import './auto-desktop-excluded-lead.e2e.part.js';
import './auto-start.e2e.part.js';
import './cancel-without-webhooks.e2e.part.js';
import './cancel-during-switch.e2e.part.js';
import './cancel-log-line.e2e.part.js';
import './cancel.e2e.part.js';
import './events.e2e.part.js';
