/**
 * The unit specs of src/options, in one file so that jest starts one file for them (test/merged-parts.mjs). One
 * spec alone: `npx jest --testMatch '<rootDir>/src/options/<file>.spec.ts'`.
 */
import './integrator-features.rules.spec.js';
import './integrator-features.shapes.spec.js';
import './limits.rules.spec.js';
import './option-shapes.spec.js';
import './orchestration.rules.spec.js';
import './purposes.rules.spec.js';
import './static-routes.rules.spec.js';
import './test-number-owners-without-owner.spec.js';
import './unknown-options-shapes.spec.js';
import './verification-option-checks.spec.js';
import './verification-options.resolver.shapes.spec.js';
import './verification-options.resolver.spec.js';
import './verification-options.rules.spec.js';
import './webhooks-and-routes.rules.spec.js';
