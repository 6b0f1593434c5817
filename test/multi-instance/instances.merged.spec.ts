/**
 * Several instances on one store: claims, adoption, limits, restarts and outages.
 *
 * Whole suites (the parts below), merged into one spec file so that jest imports Nest, the module and the
 * sandbox once for all of them (CONTRIBUTING.md, "The suite's time budget"). One part alone:
 * `npx jest --testMatch '<rootDir>/test/multi-instance/<part>.part.ts'`.
 */
import './event-claim-race.e2e.part.js';
import './in-doubt-adoption.e2e.part.js';
import './pumping-shared.e2e.part.js';
import './redis-cluster.e2e.part.js';
import './restart-mid-flight.e2e.part.js';
import './shared-limits.e2e.part.js';
import './start-last-trip.e2e.part.js';
import './store-outage.e2e.part.js';
import './unprotected-outage.e2e.part.js';
import './webhook-dedupe.e2e.part.js';
