/**
 * The unit specs of src/ledger, in one file so that jest starts one file for them (test/merged-parts.mjs). One
 * spec alone: `npx jest --testMatch '<rootDir>/src/ledger/<file>.spec.ts'`.
 */
import './ledger-report.spec.js';
import './usage-reads.spec.js';
import './verification-ledger.balance-lifetime.spec.js';
import './verification-ledger.outages.spec.js';
import './verification-ledger.service.spec.js';
import './verification-ledger.tolerance.spec.js';
