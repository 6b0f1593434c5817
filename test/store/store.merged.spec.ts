/**
 * The stores on Redis (one server, a cluster, a host's client) and the store a registration is given.
 *
 * Whole suites (the parts below), merged into one spec file so that jest imports Nest, the module and the
 * sandbox once for all of them (CONTRIBUTING.md, "The suite's time"). One part alone:
 * `npx jest --testMatch '<rootDir>/test/store/<part>.part.ts'`.
 */
import './create-store.part.js';
import './redis-autopipelining.attack.part.js';
import './redis-cluster-gaps.part.js';
import './redis-cluster.part.js';
import './redis-cluster-node-lost.attack.part.js';
import './redis-crossslot-order.attack.part.js';
import './redis-cut-writes.part.js';
import './redis-driver-choice.part.js';
import './redis-first-group-deadline.attack.part.js';
import './redis-key-groups-failures.attack.part.js';
import './redis-key-groups.attack.part.js';
import './redis-lazy-cluster-connecting.attack.part.js';
import './redis-reconnect.part.js';
import './redis-refused-groups.part.js';
import './redis-refused-late.attack.part.js';
import './redis-script-order.part.js';
import './redis-slow-accept.part.js';
import './redis-store-edges.part.js';
import './redis-subscriber-close-first-open.attack.part.js';
import './redis-subscriber-deaf.part.js';
import './redis-subscriber-check-reconnect.attack.part.js';
import './redis-subscriber-deaf-linger.attack.part.js';
import './redis-subscriber-check-acl.attack.part.js';
import './redis-subscriber-check-stall.attack.part.js';
import './redis-cluster-check-removed.attack.part.js';
import './redis-subscriber-channels.part.js';
import './redis-subscriber-lazy-client.attack.part.js';
import './redis-subscriber-nodes.part.js';
import './redis-subscriber-refused.part.js';
import './redis-subscriber-reopen.part.js';
import './redis.store.part.js';
import './registration-scoped-store.part.js';
