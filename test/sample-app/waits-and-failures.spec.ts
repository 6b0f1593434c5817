import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { Page } from 'playwright-core';
import { SandboxControlClient } from '../../src/testing/index.js';
import {
  inElement,
  shownText,
  startSampleAppInBrowser,
  startVerification,
  waitForPhase,
  type SampleAppInBrowser,
  PAGE_TRANSPORTS,
} from './sample-app-browser.js';

/**
 * What the page shows when the world changes: the sandbox's clock moves (resend and rate-limit
 * waits, expiry) or the API fails. These change what every session sees, so they run one at a time.
 */
// Over the status stream, and by polling as in a browser without EventSource.
describe.each(PAGE_TRANSPORTS)('sample app: waits, expiry and a failing API (%s)', (transport) => {
  let browser: SampleAppInBrowser;
  let page: Page;

  beforeAll(async () => {
    browser = await startSampleAppInBrowser({ transport });
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

  it('the resend countdown, then a rate-limit wait for another start to the same number', async () => {
    await startVerification(page, '+7 912 345-67-12', 'sms');
    await expect(page.textContent(inElement('#resend'))).resolves.toMatch(/^New code in (1:00|0:[0-5]\d)$/);
    await expect(page.isDisabled(inElement('#resend'))).resolves.toBe(true);

    // The cooldown is per method: starting SMS again after a cancel is a resend and waits.
    await page.click(inElement('#cancel'));
    // The cancel answered (the task closes) before the next start: a click while it is in flight starts nothing.
    await page.locator(inElement('#task[hidden]')).waitFor({ state: 'attached' });
    await page.check(inElement('input[name="method"][value="sms"]'));
    await page.click(inElement('#go'));
    await expect(shownText(page, inElement('#start-error'))).resolves.toMatch(
      /^We just sent something to this number\. You can ask again in (1:00|0:[0-5]\d)\.$/,
    );
    await expect(page.getAttribute(inElement('#go'), 'aria-disabled')).resolves.toBe('true');
    await browser.screenshot(page, '11-rate-limit-wait');

    // Time travel past the cooldown: the wait ends and the start goes through.
    await page.click('#advance-1m');
    await page.locator(inElement('#go[aria-disabled="false"]')).waitFor();
    await expect(page.textContent(inElement('#start-error'))).resolves.toBe('');
    await page.click(inElement('#go'));
    await page.waitForSelector(inElement('#task:not([hidden])'));
    await expect(
      page.evaluate(`document.querySelector('phone-verification').client.getState().method`),
    ).resolves.toBe('sms');
  });

  it('"Try another way" is counted down to fallback_available_at, offered then, and moves the verification on', async () => {
    // A reverse call on a fresh host: its fallback moment is the fixed 45 s (no figures yet).
    const phone = transport === 'stream' ? '+7 912 345-68-41' : '+7 912 345-68-42';
    await startVerification(page, phone, 'reverse_flash_call');
    // Counted down from the first status (by polling, a poll interval after the start).
    const other = page.locator(inElement('#switch:not([hidden])'), {
      hasText: /^Another way in 0:(45|4\d)$/,
    });
    await other.waitFor();
    await expect(other.isDisabled()).resolves.toBe(true);
    const id = await page.evaluate(
      `document.querySelector('phone-verification').client.getState().verificationId`,
    );

    // Past the moment on the server's clock: the page offers it.
    await page.click('#advance-1m');
    await page.locator(inElement('#switch:not([disabled])'), { hasText: /^Try another way$/ }).waitFor();
    await browser.screenshot(page, '15-try-another-way');
    await page.click(inElement('#switch'));
    // The sample page's CSP (script-src 'self') refuses the eval that waitForFunction polls with once its
    // first look is false: poll with evaluate, which runs through the DevTools protocol.
    const method = () =>
      page.evaluate(`document.querySelector('phone-verification').client.getState().method`);
    for (let tries = 0; (await method()) === 'reverse_flash_call'; tries++) {
      if (tries > 200) throw new Error('the verification did not move on from reverse_flash_call');
      await page.waitForTimeout(50);
    }
    await waitForPhase(page, 'awaiting_user');
    const state = (await page.evaluate(
      `(() => { const s = document.querySelector('phone-verification').client.getState(); return { id: s.verificationId, tried: s.methodsTried, phase: s.phase }; })()`,
    )) as { id: string; tried: string[]; phase: string };
    // The same verification, one method further.
    expect(state).toMatchObject({ id, phase: 'awaiting_user' });
    expect(state.tried[0]).toBe('reverse_flash_call');
    expect(state.tried).toHaveLength(2);
  });

  it('expiry: the countdown runs on the server clock, and the page says when it expired', async () => {
    await startVerification(page, '+7 912 345-67-13', 'sms');
    await expect(page.textContent(inElement('#timer'))).resolves.toMatch(/^Expires in (5:00|4:5\d)$/);
    await page.click('#advance-1m');
    await page.locator(inElement('#timer'), { hasText: /^Expires in (4:00|3:[45]\d)$/ }).waitFor();
    await page.click('#advance-5m');
    await waitForPhase(page, 'expired');
    await expect(page.textContent(inElement('#title'))).resolves.toBe('The verification expired');
    await page
      .locator('#host-events li[data-event="verification.expired"]', { hasText: '+7******6713' })
      .waitFor();
    await browser.screenshot(page, '12-expired');
  });

  it('the API failing is "temporarily unavailable", and a retry then works', async () => {
    await new SandboxControlClient(browser.sample.sandboxUrl!).addFault({
      route: 'POST /v1/verify',
      kind: 'status',
      status: 500,
      count: 1,
    });
    await page.fill(inElement('#phone'), '+7 912 345-67-15');
    await page.check(inElement('input[name="method"][value="sms"]'));
    await page.click(inElement('#go'));
    await expect(shownText(page, inElement('#start-error'))).resolves.toBe(
      'Verification is unavailable right now. Please try again in a moment.',
    );
    await browser.screenshot(page, '13-service-unavailable');
    await page.click(inElement('#go'));
    await page.waitForSelector(inElement('#task:not([hidden])'));
    await expect(page.textContent(inElement('#start-error'))).resolves.toBe('');
  });
});
