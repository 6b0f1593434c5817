/**
 * The unit specs of src/history, in one file so that jest starts one file for them (test/merged-parts.mjs). One
 * spec alone: `npx jest --testMatch '<rootDir>/src/history/<file>.spec.ts'`.
 */
import './history-links.spec.js';
import './history-rings.spec.js';
import './history-shelves.spec.js';
