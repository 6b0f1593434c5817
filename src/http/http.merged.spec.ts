/**
 * The unit specs of src/http, in one file so that jest starts one file for them (test/merged-parts.mjs). One
 * spec alone: `npx jest --testMatch '<rootDir>/src/http/<file>.spec.ts'`.
 */
import './browser-key.cookie.spec.js';
import './global-prefix.spec.js';
import './literal-prefix.spec.js';
import './sse-response.spec.js';
import './status-stream.hub.spec.js';
