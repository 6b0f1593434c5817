/**
 * The unit specs of src/module, in one file so that jest starts one file for them (test/merged-parts.mjs). One
 * spec alone: `npx jest --testMatch '<rootDir>/src/module/<file>.spec.ts'`.
 */
import './distinct-routes.spec.js';
import './on-verification-event.decorator.spec.js';
import './verification-registration.spec.js';
