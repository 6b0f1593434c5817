/** The browser of the browser tests (resolved in test/global-setup.ts, where jest's global setup can load it). */
export { chromiumExecutable, DEBIAN_CHROMIUM } from '../global-setup.js';
