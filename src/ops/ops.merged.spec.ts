/**
 * The unit specs of src/ops, in one file so that jest starts one file for them (test/merged-parts.mjs). One
 * spec alone: `npx jest --testMatch '<rootDir>/src/ops/<file>.spec.ts'`.
 */
import './ops-page.document.spec.js';
import './ops-page.view.spec.js';
import './verification-ops-page.service.spec.js';
import './verification-ops.controller.spec.js';
