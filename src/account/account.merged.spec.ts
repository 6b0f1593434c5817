/**
 * The unit specs of src/account, in one file so that jest starts one file for them (test/merged-parts.mjs). One
 * spec alone: `npx jest --testMatch '<rootDir>/src/account/<file>.spec.ts'`.
 */
import './balance-watch.spec.js';
import './figure-counters.spec.js';
import './figure-evidence.health-shares.spec.js';
import './figure-evidence.pages.spec.js';
import './figure-evidence.rolling-deploy.attack.spec.js';
import './figure-evidence.shares.spec.js';
import './figure-evidence.spec.js';
import './figure-rules.spec.js';
import './first-method.next-step.spec.js';
import './first-method.spec.js';
import './journey-ends.spec.js';
import './method-figures.rules.spec.js';
import './method-health.claims.attack.spec.js';
import './method-health.kept.attack.spec.js';
import './method-health.kept.spec.js';
import './method-health.midnight.attack.spec.js';
import './method-health.service.spec.js';
import './method-health.spec.js';
import './method-health.steering.attack.spec.js';
import './method-health.watch.spec.js';
import './method-stats.figures.spec.js';
import './method-stats.outcomes.spec.js';
import './method-stats.service.spec.js';
import './method-stats.shared-store.spec.js';
import './operator-figures.spec.js';
import './price-book.offered.spec.js';
import './price-book.spec.js';
import './verification-health.indicator.spec.js';
