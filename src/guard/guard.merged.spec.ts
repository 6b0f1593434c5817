/**
 * The unit specs of src/guard, in one file so that jest starts one file for them (test/merged-parts.mjs). One
 * spec alone: `npx jest --testMatch '<rootDir>/src/guard/<file>.spec.ts'`.
 */
import './phone-change.spec.js';
import './verified-phone-claims.spec.js';
import './verified-phone.decorators.spec.js';
import './verified-phone.request.spec.js';
