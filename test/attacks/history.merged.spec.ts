/**
 * The attacks on the history (erasure, flushed outcomes, refusal budgets).
 *
 * Whole suites (the parts below), merged into one spec file so that jest imports Nest, the module and the
 * sandbox once for all of them (CONTRIBUTING.md, "The suite's time budget"). One part alone:
 * `npx jest --testMatch '<rootDir>/test/attacks/<part>.part.ts'`.
 */
import './history-erased-by-attacker.e2e.part.js';
import './history-seq-restart.e2e.part.js';
import './history-erasure-outcome-in-flight.e2e.part.js';
import './history-outcomes-flushed.e2e.part.js';
import './history-refusal-budget-neighbour.e2e.part.js';
import './history-refusal-flood-store.e2e.part.js';
import './history-refusals-flushed-free-starts.e2e.part.js';
import './history-wrong-codes-flushed.e2e.part.js';
import './history-erasure-other-rings.e2e.part.js';
import './history-erasure-lowered-max-entries.e2e.part.js';
import './history-erasure-redo-later-entry.e2e.part.js';
import './history-counters-at-retention-bound.e2e.part.js';
import './history-links-left-behind.e2e.part.js';
import './history-links-erasure-cost.e2e.part.js';
import './history-links-erasure-race.e2e.part.js';
import './history-links-at-retention-bound.e2e.part.js';
import './history-erasure-slot-retaken.e2e.part.js';
