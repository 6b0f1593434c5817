/**
 * The phone change: answers, effects and the flow.
 *
 * Whole suites (the parts below), merged into one spec file so that jest imports Nest, the module and the
 * sandbox once for all of them (CONTRIBUTING.md, "The suite's time budget"). One part alone:
 * `npx jest --testMatch '<rootDir>/test/phone-change/<part>.part.ts'`.
 */
import './phone-change-answers.part.js';
import './phone-change-effects.part.js';
import './phone-change.e2e.part.js';
