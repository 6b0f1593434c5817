import { browser } from './transport.js';

export type DeviceHint = 'mobile' | 'desktop';

/**
 * A guess at the user's device for `start({ device })`: the User-Agent Client Hints' `mobile` where
 * the browser has them, else the user agent's `Mobi` token (the check MDN recommends). A tablet counts
 * as a desktop. Undefined outside a browser. Pass your own hint when the page knows better.
 */
export function detectDevice(): DeviceHint | undefined {
  const nav = browser.navigator;
  const mobile =
    nav?.userAgentData?.mobile ?? (nav?.userAgent === undefined ? undefined : /Mobi/.test(nav.userAgent));
  return mobile === undefined ? undefined : mobile ? 'mobile' : 'desktop';
}
