/**
 * The rules of a start: the host's hooks, limits, cooldowns, priors, refusals and permits.
 *
 * Whole suites (the parts below), merged into one spec file so that jest imports Nest, the module and the
 * sandbox once for all of them (CONTRIBUTING.md, "The suite's time budget"). One part alone:
 * `npx jest --testMatch '<rootDir>/test/protection/<part>.part.ts'`.
 */
import './before-start.e2e.part.js';
import './check-limit-first.e2e.part.js';
import './cooldown-and-check.e2e.part.js';
import './free-start-networks.e2e.part.js';
import './graded-answers.e2e.part.js';
import './limit-options.part.js';
import './prior-attacks.e2e.part.js';
import './refused-starts.e2e.part.js';
import './start-limits.e2e.part.js';
import './start-permit.part.js';
import './graded-shapes.e2e.part.js';
import './coalescer-fallback-late.attack.part.js';
