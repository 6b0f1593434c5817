/**
 * The attacks on the method figures, the first method and the priors.
 *
 * Whole suites (the parts below), merged into one spec file so that jest imports Nest, the module and the
 * sandbox once for all of them (CONTRIBUTING.md, "The suite's time budget"). One part alone:
 * `npx jest --testMatch '<rootDir>/test/attacks/<part>.part.ts'`.
 */
import './fallback-moment-paced-drift.part.js';
import './fallback-moment-quiet-hour-reset.part.js';
import './fallback-moment-quiet-jump.part.js';
import './figures-damping-new-instance.e2e.part.js';
import './figures-device-hints-pooled-moment.e2e.part.js';
import './figures-followed-botnet.e2e.part.js';
import './figures-late-farm-moment.e2e.part.js';
import './figures-record-callers-moment.e2e.part.js';
import './figures-registrations-one-store.e2e.part.js';
import './figures-thin-cell.e2e.part.js';
import './first-method-erased-pending.e2e.part.js';
import './first-method-fresh-prefixes.e2e.part.js';
import './first-method-life-device-hint.e2e.part.js';
import './first-method-pending-free-starts.e2e.part.js';
import './health-country-farm-rescues.e2e.part.js';
import './health-degraded-quiet-host.e2e.part.js';
import './health-degraded-waves.e2e.part.js';
import './health-demoted-comes-back.e2e.part.js';
import './health-demoted-midnight-retry.e2e.part.js';
import './health-demoted-switch-other-instance.e2e.part.js';
import './health-demoted-tracked-stale-other-instance.e2e.part.js';
import './health-farm-one-ipv6-network.e2e.part.js';
import './health-instance-booted-in-outage.e2e.part.js';
import './health-kept-record-unreadable.e2e.part.js';
import './health-operator-outage-country-recovers.e2e.part.js';
import './health-operator-outage-flaps.e2e.part.js';
import './health-outage-keeps-method-out.e2e.part.js';
import './health-outage-repeat-networks.e2e.part.js';
import './health-quiet-night-stale-window.e2e.part.js';
import './health-slow-listener-holds-start.e2e.part.js';
import './health-two-instances-announced-twice.e2e.part.js';
import './health-week-share-late-sessions.e2e.part.js';
import './health-week-turn-farm.e2e.part.js';
import './health-window-share-bunched.e2e.part.js';
import './health-window-share-sustained-farm.e2e.part.js';
import './prior-burst-recent.e2e.part.js';
import './prior-one-address-keys.e2e.part.js';
import './prior-one-network.e2e.part.js';
import './prior-share-covered-by-users.e2e.part.js';
