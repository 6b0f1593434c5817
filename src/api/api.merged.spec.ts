/**
 * The unit specs of src/api, in one file so that jest starts one file for them (test/merged-parts.mjs). One
 * spec alone: `npx jest --testMatch '<rootDir>/src/api/<file>.spec.ts'`.
 */
import './api-client.options.spec.js';
import './api-response.reader.spec.js';
import './api.mapper.spec.js';
import './http-transport.spec.js';
import './method-names.spec.js';
import './retry-policy.spec.js';
import './verification-api.client.spec.js';
import './verification-api.error.spec.js';
