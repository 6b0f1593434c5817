/**
 * The client routes' boundaries: the host's own routes, a global prefix, secrets, OpenAPI and clocks.
 *
 * Whole suites (the parts below), merged into one spec file so that jest imports Nest, the module and the
 * sandbox once for all of them (CONTRIBUTING.md, "The suite's time budget"). One part alone:
 * `npx jest --testMatch '<rootDir>/test/client-routes/<part>.part.ts'`.
 */
import './host-boundary.e2e.part.js';
import './global-prefix.e2e.part.js';
import './no-secrets.e2e.part.js';
import './openapi.e2e.part.js';
import './owner-null.e2e.part.js';
import './status-rebuild-unknown.e2e.part.js';
import './verified-at-clock.e2e.part.js';
