/**
 * The history: bounds, the refusal budget and standing, and what it keeps.
 *
 * Whole suites (the parts below), merged into one spec file so that jest imports Nest, the module and the
 * sandbox once for all of them (CONTRIBUTING.md, "The suite's time budget"). One part alone:
 * `npx jest --testMatch '<rootDir>/test/history/<part>.part.ts'`.
 */
import './history-bounds.e2e.part.js';
import './history-erasure-host-store.e2e.part.js';
import './history-refusal-budget.e2e.part.js';
import './history.e2e.part.js';
import './history-refusal-standing.e2e.part.js';
import './start-outcomes.e2e.part.js';
import './history-verified-free.e2e.part.js';
