/**
 * The attacks on the routes (cookie path, status polls), the meters and the money (the pumping counts).
 *
 * Whole suites (the parts below), merged into one spec file so that jest imports Nest, the module and the
 * sandbox once for all of them (CONTRIBUTING.md, "The suite's time budget"). One part alone:
 * `npx jest --testMatch '<rootDir>/test/attacks/<part>.part.ts'`.
 */
import './api-rate-status-polls-network.e2e.part.js';
import './api-rate-status-polls.e2e.part.js';
import './burst-caller-mark-burned.part.js';
import './coalescer-hung-holder-same-instance.part.js';
import './coalescing-claim-admission-reads.e2e.part.js';
import './switch-step-claim-slow-admission.e2e.part.js';
import './burst-number-mark-refused-stream.part.js';
import './cookie-path-route-param.e2e.part.js';
import './cookie-path-versioning.e2e.part.js';
import './dump-spend-cap-figures.e2e.part.js';
import './giver-shares-reverified-number.e2e.part.js';
import './registrations-shared-prefix-reconcile.e2e.part.js';
import './session-record-older-instance.e2e.part.js';
import './spend-cap-inflight-usage.e2e.part.js';
import './spend-cap-one-account-registrations.e2e.part.js';
import './spend-cap-pooled-usage.e2e.part.js';
import './start-ip-limit-aborted-connection.e2e.part.js';
import './status-network-meter-one-address.e2e.part.js';
import './status-rebuild-meter-neighbour.e2e.part.js';
import './status-rebuild-retry-after.e2e.part.js';
import './status-refresh-guest-owners.e2e.part.js';
import './status-refresh-owners-one-address.e2e.part.js';
import './steered-takeback-race.e2e.part.js';
