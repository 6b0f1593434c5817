import { afterAll, describe, expect, it } from '@jest/globals';
import {
  actOnPhone,
  codeOnPhone,
  enterCode,
  sharedSampleAppInBrowser,
  shownText,
  startVerification,
  wrongCodeFor,
  PAGE_TRANSPORTS,
} from './sample-app-browser.js';

const FLOW_TIMEOUT_MS = 60_000;

/** The page around the happy path: reloads, attempts, refusals in plain words, a narrow screen. */
// Over the status stream, and by polling as in a browser without EventSource.
describe.each(PAGE_TRANSPORTS)('sample app: reloads, attempts and refusals on the page (%s)', (transport) => {
  // Each test has its own tab and phone number; they run side by side in one browser.
  const shared = sharedSampleAppInBrowser({ transport });
  const inPage = shared.inPage;
  afterAll(() => shared.close());

  it.concurrent(
    'a reload in the middle resumes the verification (msgr2_bot: link, QR code, then the code)',
    inPage(async (page, browser) => {
      await startVerification(page, '+7 912 345-67-11', 'msgr2_bot');
      const link = await page.getAttribute('#bot-link', 'href');
      const expiry = await page.textContent('#v-expiry');

      await page.reload();
      await page.waitForSelector('body[data-ready="true"]');
      await expect(page.isVisible('#verification')).resolves.toBe(true);
      await expect(page.isHidden('#start-form')).resolves.toBe(true);
      await expect(page.textContent('#v-notice')).resolves.toContain('your verification continues');
      await expect(page.textContent('#v-phone')).resolves.toBe('+7 912 345-67-11');
      await expect(page.getAttribute('#bot-link', 'href')).resolves.toBe(link);
      await expect(page.textContent('#v-expiry')).resolves.toMatch(/^Expires in [45]:\d\d$/);
      expect(expiry).toMatch(/^Expires in [45]:\d\d$/);
      await browser.screenshot(page, '10-resumed-after-reload');

      await actOnPhone(page, 'share');
      const code = await codeOnPhone(page);
      await page.waitForSelector('#code-form:not([hidden])');
      await page.reload();
      await page.waitForSelector('body[data-ready="true"]');
      await page.waitForSelector('#code-form:not([hidden])');
      await enterCode(page, code);
      await page.waitForSelector('#result[data-outcome="verified"]:not([hidden])');
      await page
        .locator('#host-events li[data-event="verification.verified"]', { hasText: '+7******6711' })
        .waitFor();
      // Finished: a reload starts afresh.
      await page.reload();
      await page.waitForSelector('body[data-ready="true"]');
      await expect(page.isVisible('#start-form')).resolves.toBe(true);
    }),
    FLOW_TIMEOUT_MS,
  );

  it.concurrent(
    'three wrong codes: attempts count down, then the verification fails',
    inPage(async (page) => {
      await startVerification(page, '+7 912 345-67-14', 'sms');
      const wrong = wrongCodeFor(await codeOnPhone(page));
      const messages: string[] = [];
      for (let i = 0; i < 3; i++) {
        // Typing hides the last message; the check's answer shows the next one.
        await enterCode(page, wrong);
        await page.waitForSelector('#v-error:not([hidden])', { state: 'attached' });
        messages.push((await page.textContent('#v-error'))!);
      }
      expect(messages).toEqual([
        "That code isn't right. You have 2 attempts left.",
        "That code isn't right. You have 1 attempt left.",
        "That code isn't right, and no attempts are left. Please start again.",
      ]);
      await page.waitForSelector('#result[data-outcome="failed"]:not([hidden])');
      await expect(page.textContent('#result-text')).resolves.toBe(
        'Too many wrong codes were entered. Please start again.',
      );
    }),
    FLOW_TIMEOUT_MS,
  );

  it.concurrent.each([
    ['12ab', "That doesn't look like a phone number. Please check it, for example +7 912 345-67-89."],
    ['+1 202 555 0143', "Numbers from this country can't be verified here. Please use another number."],
    ['+7 495 123-45-67', 'Only mobile numbers can be verified. Please enter a mobile number.'],
  ])(
    'a refused number is explained in plain words: %s',
    (typed, words) =>
      inPage(async (page) => {
        await page.fill('#phone-input', typed);
        await page.check('#method-list input[value="sms"]');
        await page.click('#start-button');
        await expect(shownText(page, '#start-error')).resolves.toBe(words);
        await expect(page.isVisible('#start-form')).resolves.toBe(true);
      })(),
    FLOW_TIMEOUT_MS,
  );

  it.concurrent(
    'fits a phone-sized screen without sideways scrolling',
    inPage(async (page, browser) => {
      await page.setViewportSize({ width: 390, height: 844 });
      await startVerification(page, '+7 912 345-67-16', 'reverse_flash_call');
      await expect(page.isVisible('#call-link')).resolves.toBe(true);
      // Nothing is sent to the phone for this method: no "new code" wording.
      await expect(page.textContent('#restart-button')).resolves.toBe('Try again or use another method');
      await expect(
        page.evaluate('document.documentElement.scrollWidth <= document.documentElement.clientWidth'),
      ).resolves.toBe(true);
      await browser.screenshot(page, '14-narrow-screen');
    }),
    FLOW_TIMEOUT_MS,
  );
});
