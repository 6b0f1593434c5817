/**
 * Registrations: forRootAsync with config, injected options, named registrations.
 *
 * Whole suites (the parts below), merged into one spec file so that jest imports Nest, the module and the
 * sandbox once for all of them (CONTRIBUTING.md, "The suite's time budget"). One part alone:
 * `npx jest --testMatch '<rootDir>/test/registration/<part>.part.ts'`.
 */
import './forroot-async-config.e2e.part.js';
import './host-request-types.part.js';
import './inject-verification-options.e2e.part.js';
import './named-registrations.e2e.part.js';
import './named-store-shapes.e2e.part.js';
import './registration-shapes.e2e.part.js';
import './shared-store-own-state.e2e.part.js';
import './verification-module.registration.part.js';
import './webhook-decorators-shapes.e2e.part.js';
