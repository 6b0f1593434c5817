/**
 * The unit specs of src/store, in one file so that jest starts one file for them (test/merged-parts.mjs). One
 * spec alone: `npx jest --testMatch '<rootDir>/src/store/<file>.spec.ts'`.
 */
import './local-channels.spec.js';
import './open-redis-client.spec.js';
import './redis-connection.spec.js';
import './redis-subscriber.check.spec.js';
import './redis-subscriber.spec.js';
import './store-claim.spec.js';
import './store-claim.renew.spec.js';
import './store-claim.table.spec.js';
import './store-replace.spec.js';
import './write-order.spec.js';
