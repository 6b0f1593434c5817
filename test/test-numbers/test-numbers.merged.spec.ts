/**
 * The test numbers: attacks, kept numbers, resumes, strangers, races and wrong-code budgets.
 *
 * Whole suites (the parts below), merged into one spec file so that jest imports Nest, the module and the
 * sandbox once for all of them (CONTRIBUTING.md, "The suite's time budget"). One part alone:
 * `npx jest --testMatch '<rootDir>/test/test-numbers/<part>.part.ts'`.
 */
import './test-number-attacks.e2e.part.js';
import './test-numbers-handed-back-write.e2e.part.js';
import './test-numbers-kept.e2e.part.js';
import './test-numbers-resume.e2e.part.js';
import './test-numbers-spare-slots.e2e.part.js';
import './test-numbers-strangers.e2e.part.js';
import './test-numbers-switch-give-back.e2e.part.js';
import './test-numbers-wrong-code-budgets.e2e.part.js';
import './test-numbers.e2e.part.js';
import './test-session-races.part.js';
import './test-session-retention.e2e.part.js';
