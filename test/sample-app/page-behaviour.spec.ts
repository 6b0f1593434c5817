import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { Page } from 'playwright-core';
import {
  actOnPhone,
  codeOnPhone,
  enterCode,
  startSampleAppInBrowser,
  startVerification,
  wrongCodeFor,
  type SampleAppInBrowser,
} from './sample-app-browser.js';

/** The page's behaviour around the happy path: reloads, waits, expiry, refusals in plain words. */
describe('sample app: reloads, waits and errors on the page', () => {
  let browser: SampleAppInBrowser;
  let page: Page;

  beforeAll(async () => {
    browser = await startSampleAppInBrowser();
  });
  afterAll(async () => {
    await browser?.close();
  });

  beforeEach(async () => {
    page = await browser.openPage();
  });
  afterEach(async () => {
    await page?.close();
  });

  it('a reload in the middle resumes the verification (msgr2_bot: link, QR code, then the code)', async () => {
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
  });

  it('the resend countdown, then a rate-limit wait for another start to the same number', async () => {
    await startVerification(page, '+7 912 345-67-12', 'sms');
    await expect(page.textContent('#v-resend')).resolves.toMatch(
      /^You can ask for a new code in (1:00|0:[0-5]\d)$/,
    );
    await expect(page.isDisabled('#restart-button')).resolves.toBe(true);

    await page.click('#cancel-button');
    await page.check('#method-list input[value="flash_call"]');
    await page.click('#start-button');
    const refusal = page.locator('#start-error');
    await refusal.waitFor();
    await expect(refusal.textContent()).resolves.toMatch(
      /^We just sent something to this number\. You can ask again in (1:00|0:[0-5]\d)\.$/,
    );
    await expect(page.isDisabled('#start-button')).resolves.toBe(true);
    await browser.screenshot(page, '11-rate-limit-wait');

    // Time travel past the cooldown: the wait ends and the start goes through.
    await page.click('#advance-1m');
    await page.waitForSelector('#start-error', { state: 'hidden' });
    await expect(page.isEnabled('#start-button')).resolves.toBe(true);
    await page.click('#start-button');
    await page.waitForSelector('#verification:not([hidden])');
    await expect(page.textContent('#v-method')).resolves.toBe('Missed-call code');
  });

  it('expiry: the countdown runs on the server clock, and the page says when it expired', async () => {
    await startVerification(page, '+7 912 345-67-13', 'sms');
    await expect(page.textContent('#v-expiry')).resolves.toMatch(/^Expires in (5:00|4:5\d)$/);
    await page.click('#advance-1m');
    await page.locator('#v-expiry', { hasText: /^Expires in (4:00|3:[45]\d)$/ }).waitFor();
    await page.click('#advance-5m');
    await page.waitForSelector('#result[data-outcome="expired"]:not([hidden])');
    await expect(page.textContent('#result-title')).resolves.toBe('The verification expired');
    await page
      .locator('#host-events li[data-event="verification.expired"]', { hasText: '+7******6713' })
      .waitFor();
    await browser.screenshot(page, '12-expired');
  });

  it('three wrong codes: attempts count down, then the verification fails', async () => {
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
  });

  it.each([
    ['12ab', "That doesn't look like a phone number. Please check it, for example +7 912 345-67-89."],
    ['+1 202 555 0143', "Numbers from this country can't be verified here. Please use another number."],
    ['+7 495 123-45-67', 'Only mobile numbers can be verified. Please enter a mobile number.'],
  ])('a refused number is explained in plain words: %s', async (typed, words) => {
    await page.fill('#phone-input', typed);
    await page.check('#method-list input[value="sms"]');
    await page.click('#start-button');
    await expect(page.locator('#start-error').textContent()).resolves.toBe(words);
    await expect(page.isVisible('#start-form')).resolves.toBe(true);
  });

  it('the API failing is "temporarily unavailable", and a retry then works', async () => {
    await fetch(`${browser.sample.sandboxUrl}/_sandbox/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ route: 'POST /v1/verify', kind: 'status', status: 500, count: 1 }),
    });
    await page.fill('#phone-input', '+7 912 345-67-15');
    await page.check('#method-list input[value="sms"]');
    await page.click('#start-button');
    await expect(page.locator('#start-error').textContent()).resolves.toBe(
      'Phone verification is temporarily unavailable. Please try again in a moment.',
    );
    await browser.screenshot(page, '13-service-unavailable');
    await page.click('#start-button');
    await page.waitForSelector('#verification:not([hidden])');
    await expect(page.isHidden('#start-error')).resolves.toBe(true);
  });
});
