/**
 * The client routes' answers: happy paths, methods, bodies, errors and the spec's gaps.
 *
 * Whole suites (the parts below), merged into one spec file so that jest imports Nest, the module and the
 * sandbox once for all of them (CONTRIBUTING.md, "The suite's time budget"). One part alone:
 * `npx jest --testMatch '<rootDir>/test/client-routes/<part>.part.ts'`.
 */
import './happy-paths.e2e.part.js';
import './status-reads.e2e.part.js';
import './methods.e2e.part.js';
import './body-rules.e2e.part.js';
import './check-at-expiry.e2e.part.js';
import './start-expiry.e2e.part.js';
import './start-upstream-answers.e2e.part.js';
import './errors.e2e.part.js';
import './wrong-base-path.e2e.part.js';
import './spec-gaps.e2e.part.js';
import './operator-fallback-code-length.e2e.part.js';
