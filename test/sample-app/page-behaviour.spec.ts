import { afterAll, describe, expect, it } from '@jest/globals';
import {
  actOnPhone,
  codeOnPhone,
  enterCode,
  inElement,
  sharedSampleAppInBrowser,
  shownText,
  startVerification,
  waitForPhase,
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
      const link = await page.getAttribute(inElement('#bot'), 'href');
      const expiry = await page.textContent(inElement('#timer'));

      await page.reload();
      await page.waitForSelector('body[data-ready="true"]');
      await page.waitForSelector(inElement('#task:not([hidden])'));
      await expect(page.isHidden(inElement('#start'))).resolves.toBe(true);
      await expect(page.textContent(inElement('#status'))).resolves.toBe(
        'Welcome back: your verification goes on.',
      );
      await expect(
        page.evaluate(`document.querySelector('phone-verification').client.getState().phoneNumber`),
      ).resolves.toBe('+79123456711');
      await expect(page.getAttribute(inElement('#bot'), 'href')).resolves.toBe(link);
      await expect(page.textContent(inElement('#timer'))).resolves.toMatch(/^Expires in [45]:\d\d$/);
      expect(expiry).toMatch(/^Expires in [45]:\d\d$/);
      await browser.screenshot(page, '10-resumed-after-reload');

      await actOnPhone(page, 'share');
      const code = await codeOnPhone(page);
      await page.waitForSelector(inElement('#code-form:not([hidden])'));
      await page.reload();
      await page.waitForSelector('body[data-ready="true"]');
      await page.waitForSelector(inElement('#code-form:not([hidden])'));
      await enterCode(page, code);
      await waitForPhase(page, 'verified');
      await page
        .locator('#host-events li[data-event="verification.verified"]', { hasText: '+7******6711' })
        .waitFor();
      await page.reload();
      await page.waitForSelector('body[data-ready="true"]');
      await page.waitForSelector(inElement('#start:not([hidden])'));
    }),
    FLOW_TIMEOUT_MS,
  );

  it.concurrent(
    'three wrong codes: attempts count down, then the verification fails',
    inPage(async (page) => {
      await startVerification(page, '+7 912 345-67-14', 'sms');
      const wrong = wrongCodeFor(await codeOnPhone(page));
      // Each message once its answer is in (the field empties for the next try).
      for (const left of ['2 attempts left', '1 attempt left']) {
        await enterCode(page, wrong);
        await page
          .locator(inElement('#task-error'), { hasText: `That code is not right. ${left}.` })
          .waitFor();
      }
      await enterCode(page, wrong);
      await waitForPhase(page, 'failed');
      await expect(page.textContent(inElement('#outcome-error'))).resolves.toBe(
        'That code is not right. 0 attempts left.',
      );
      await expect(page.textContent(inElement('#title'))).resolves.toBe('We could not verify your number');
    }),
    FLOW_TIMEOUT_MS,
  );

  it.concurrent.each([
    ['12ab', 'Enter a phone number, for example +7 912 345-67-89.'],
    ['+1 202 555 0143', 'This number cannot be verified here. Please use another one.'],
    ['+7 495 123-45-67', 'Only mobile numbers can be verified. Please enter a mobile number.'],
  ])(
    'a refused number is explained in plain words: %s',
    (typed, words) =>
      inPage(async (page) => {
        await page.fill(inElement('#phone'), typed);
        await page.check(inElement('input[name="method"][value="sms"]'));
        await page.click(inElement('#go'));
        await expect(shownText(page, inElement('#start-error'))).resolves.toBe(words);
        await expect(page.isVisible(inElement('#start'))).resolves.toBe(true);
        // Focus on what to correct.
        await expect(
          page.evaluate(`document.querySelector('phone-verification').shadowRoot.activeElement?.id`),
        ).resolves.toBe('phone');
      })(),
    FLOW_TIMEOUT_MS,
  );

  it.concurrent(
    'fits a phone-sized screen without sideways scrolling',
    inPage(async (page, browser) => {
      await page.setViewportSize({ width: 390, height: 844 });
      await startVerification(page, '+7 912 345-67-16', 'reverse_flash_call');
      await expect(page.isVisible(inElement('#call'))).resolves.toBe(true);
      // Nothing is sent to the phone for this method: nothing to send again.
      await expect(page.isHidden(inElement('#resend'))).resolves.toBe(true);
      await expect(
        page.evaluate('document.documentElement.scrollWidth <= document.documentElement.clientWidth'),
      ).resolves.toBe(true);
      await browser.screenshot(page, '14-narrow-screen');
    }),
    FLOW_TIMEOUT_MS,
  );
});
