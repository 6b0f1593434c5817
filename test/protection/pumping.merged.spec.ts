/**
 * The pumping defence: its attacks, holds, subjects and windows.
 *
 * Whole suites (the parts below), merged into one spec file so that jest imports Nest, the module and the
 * sandbox once for all of them (CONTRIBUTING.md, "The suite's time budget"). One part alone:
 * `npx jest --testMatch '<rootDir>/test/protection/<part>.part.ts'`.
 */
import './pumping-attacks.e2e.part.js';
import './pumping-defence.e2e.part.js';
import './pumping-holds.part.js';
import './pumping-subjects.part.js';
import './pumping-windows.properties.part.js';
