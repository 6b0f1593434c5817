/**
 * The API client: operations, errors, retries, secrets and the transport.
 *
 * Whole suites (the parts below), merged into one spec file so that jest imports Nest, the module and the
 * sandbox once for all of them (CONTRIBUTING.md, "The suite's time budget"). One part alone:
 * `npx jest --testMatch '<rootDir>/test/api-client/<part>.part.ts'`.
 */
import './answer-text.e2e.part.js';
import './close-over-https.e2e.part.js';
import './errors.e2e.part.js';
import './faults.e2e.part.js';
import './no-secrets.e2e.part.js';
import './operations.e2e.part.js';
import './retry-bounds.e2e.part.js';
import './transport-isolation.e2e.part.js';
import './transport.e2e.part.js';
