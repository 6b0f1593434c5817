/**
 * Abuse: the client key, coalesced and evidenced attacks, wrong codes (and their points given back), a
 * network's status refreshes and the store's rate limiter.
 *
 * Whole suites (the parts below), merged into one spec file so that jest imports Nest, the module and the
 * sandbox once for all of them (CONTRIBUTING.md, "The suite's time budget"). One part alone:
 * `npx jest --testMatch '<rootDir>/test/protection/<part>.part.ts'`.
 */
import './client-key.e2e.part.js';
import './coalescing-expiry.e2e.part.js';
import './coalescing.e2e.part.js';
import './evidence-attacks.e2e.part.js';
import './status-read-meter-clock.attack.part.js';
import './status-refresh-networks.e2e.part.js';
import './store-rate-limiter.part.js';
import './throttler.e2e.part.js';
import './unix-socket-address.e2e.part.js';
import './wrong-code-give-back.e2e.part.js';
import './wrong-codes.e2e.part.js';
