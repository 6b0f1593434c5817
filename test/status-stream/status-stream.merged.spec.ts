/**
 * The status stream: its answers on each platform, its slots and its end.
 *
 * Whole suites (the parts below), merged into one spec file so that jest imports Nest, the module and the
 * sandbox once for all of them (CONTRIBUTING.md, "The suite's time"). One part alone:
 * `npx jest --testMatch '<rootDir>/test/status-stream/<part>.part.ts'`.
 */
import './status-stream.e2e.part.js';
import './stream-life.e2e.part.js';
import './stream-gaps.e2e.part.js';
import './buffering-middleware.e2e.part.js';
