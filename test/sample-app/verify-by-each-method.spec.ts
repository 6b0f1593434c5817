import { afterAll, describe, expect, it } from '@jest/globals';
import type { Page } from 'playwright-core';
import {
  actOnPhone,
  codeOnPhone,
  enterCode,
  inElement,
  shownText,
  sharedSampleAppInBrowser,
  waitForPhase,
  startVerification,
  wrongCodeFor,
  PAGE_TRANSPORTS,
} from './sample-app-browser.js';

/**
 * The sample page in Chromium against the sample app in sandbox mode: one full verification per
 * method, clicking through the page and the simulated phone as a person would.
 */
/** Flows share one machine and browser; each waits on poll intervals, so give each room under load. */
const FLOW_TIMEOUT_MS = 60_000;

// Over the status stream, and by polling as in a browser without EventSource.
describe.each(PAGE_TRANSPORTS)(
  'sample app: a verification by every method through the page (%s)',
  (transport) => {
    // Each flow has its own tab and phone number, so the flows run side by side in one browser.
    const shared = sharedSampleAppInBrowser({ transport });
    const inPage = shared.inPage;
    afterAll(() => shared.close());

    /** One flow in a tab of its own, side by side with the others. */
    const flow = (name: string, run: Parameters<typeof inPage>[0]): void =>
      it.concurrent(name, inPage(run), FLOW_TIMEOUT_MS);

    /** Starts with the flow's own number, `+7 912 345-67-0<n>`; returns it masked, as the host shows it. */
    async function start(page: Page, n: number, method: string): Promise<string> {
      await startVerification(page, `+7 912 345-67-0${n}`, method);
      return `+7******670${n}`;
    }

    /** The page's success screen, the host's verified event and the demo user's account. */
    async function expectVerified(page: Page, masked: string): Promise<void> {
      await waitForPhase(page, 'verified');
      await expect(page.textContent(inElement('#title'))).resolves.toBe('Your number is verified');
      const event = page.locator(`#host-events li[data-event="verification.verified"]`, { hasText: masked });
      await event.waitFor();
      await expect(event.textContent()).resolves.toContain(
        "marked the number verified on the demo user's account",
      );
      await page.locator(`#verified-numbers li[data-verified-number="${masked}"]`).waitFor();
    }

    flow('shows sandbox mode and the methods the module offers', async (page, browser) => {
      await expect(page.textContent('#mode-badge')).resolves.toBe('Sandbox mode');
      await expect(page.isVisible('#phone-column')).resolves.toBe(true);
      // The element lists the methods once GET /methods has answered: wait for the last one.
      await page.locator(inElement('input[name="method"][value="operator_id"]')).waitFor();
      const methods = await page
        .locator(inElement('input[name="method"]'))
        .evaluateAll((inputs) => inputs.map((input) => (input as unknown as { value: string }).value));
      expect(methods).toEqual([
        'auto',
        'reverse_flash_call',
        'flash_call',
        'msgr1_otp',
        'msgr2_bot',
        'sms',
        'operator_id',
      ]);
      await browser.screenshot(page, '01-start-form');
    });

    flow(
      'sms: the code field is sized by code_length; a wrong code, then the right one',
      async (page, browser) => {
        const masked = await start(page, 1, 'sms');
        await expect(page.getAttribute(inElement('#code'), 'size')).resolves.toBe('7');
        await expect(page.textContent(inElement('#code-label'))).resolves.toBe('Enter the 6-digit code');
        const code = await codeOnPhone(page);
        await browser.screenshot(page, '02-sms-code-on-phone');

        await enterCode(page, wrongCodeFor(code));
        await expect(shownText(page, inElement('#task-error'))).resolves.toBe(
          'That code is not right. 2 attempts left.',
        );
        await browser.screenshot(page, '03-sms-wrong-code');
        // Typing again dismisses the message; the attempts left stay on screen.
        await page.fill(inElement('#code'), code.slice(0, 2));
        await expect(page.textContent(inElement('#task-error'))).resolves.toBe('');
        await expect(page.textContent(inElement('#attempts'))).resolves.toBe('2 attempts left');
        await expect(page.isVisible(inElement('#attempts'))).resolves.toBe(true);

        await enterCode(page, code);
        await expectVerified(page, masked);
        await browser.screenshot(page, '04-sms-verified');
      },
    );

    flow('msgr1_otp: the code arrives in the messenger', async (page) => {
      const masked = await start(page, 2, 'msgr1_otp');
      await expect(page.textContent(inElement('#screen'))).resolves.toContain('Messenger 1');
      const item = page.locator('#phone-screen .phone-item').first();
      const code = await codeOnPhone(page);
      await expect(item.locator('.phone-app').textContent()).resolves.toBe('Messenger 1');
      await enterCode(page, code);
      await expectVerified(page, masked);
    });

    flow('flash_call: the code is the last digits of the missed call', async (page, browser) => {
      const masked = await start(page, 3, 'flash_call');
      await expect(page.textContent(inElement('#code-label'))).resolves.toBe('Enter the 4-digit code');
      await expect(page.textContent(inElement('#screen'))).resolves.toContain('The last 4 digits');
      const caller = page.locator('#phone-screen .phone-item').first().locator('[data-incoming-number]');
      await caller.waitFor();
      const incoming = (await caller.getAttribute('data-incoming-number'))!;
      expect(incoming).toMatch(/^\+79\d{9}$/);
      await browser.screenshot(page, '05-flash-call-missed-call');
      await enterCode(page, incoming.slice(-4));
      await expectVerified(page, masked);
    });

    flow(
      'reverse_flash_call: "call this number" with a tel: link; the call verifies, no code',
      async (page, browser) => {
        const masked = await start(page, 4, 'reverse_flash_call');
        const href = (await page.getAttribute(inElement('#call'), 'href'))!;
        expect(href).toMatch(/^tel:\+7800\d{7}$/);
        // On a computer, the QR code of the tel: link: the phone calls with a scan.
        await expect(page.getAttribute(inElement('[part~=qr] svg'), 'aria-label')).resolves.toBe(
          `QR code of ${href}`,
        );
        await expect(page.isHidden(inElement('#code-form'))).resolves.toBe(true);
        // The phone dials the number the page shows.
        const dial = page.locator('#phone-screen .phone-item').first().locator('[data-number-to-call]');
        await expect(dial.getAttribute('data-number-to-call')).resolves.toBe(href.slice('tel:'.length));
        await browser.screenshot(page, '06-reverse-flash-call');
        await actOnPhone(page, 'call');
        await expectVerified(page, masked);
      },
    );

    flow(
      'msgr2_bot: the deep link and its QR code; the bot sends the code once the number is shared',
      async (page, browser) => {
        const masked = await start(page, 5, 'msgr2_bot');
        const link = (await page.getAttribute(inElement('#bot'), 'href'))!;
        expect(link).toMatch(/^https:\/\/msgr2\.example\/sandbox_verify_bot\?start=[0-9a-f]+$/);
        // The element draws the QR code itself (no server route, no CDN).
        await expect(page.getAttribute(inElement('[part~=qr] svg'), 'aria-label')).resolves.toBe(
          `QR code of ${link}`,
        );
        // No code field until the bot has sent a code (awaiting_code).
        await expect(page.isHidden(inElement('#code-form'))).resolves.toBe(true);
        await browser.screenshot(page, '07-msgr2-bot-link-and-qr');

        await actOnPhone(page, 'share');
        const code = await codeOnPhone(page);
        await page.waitForSelector(inElement('#code-form:not([hidden])'));
        await expect(page.textContent(inElement('#screen'))).resolves.toContain('The bot sent you a code');
        await enterCode(page, code);
        await expectVerified(page, masked);
      },
    );

    flow('operator_id: "confirm on your phone", approved on the phone', async (page, browser) => {
      const masked = await start(page, 6, 'operator_id');
      await expect(page.textContent(inElement('#screen'))).resolves.toContain('Approve the prompt');
      await expect(page.isHidden(inElement('#code-form'))).resolves.toBe(true);
      await page.locator('#phone-screen .phone-item[data-state="push"]').waitFor();
      await browser.screenshot(page, '08-operator-push');
      await actOnPhone(page, 'approve');
      await expectVerified(page, masked);
    });

    flow(
      'operator_id: the push cannot complete, the wait turns into a code field (SMS fallback)',
      async (page, browser) => {
        const masked = await start(page, 7, 'operator_id');
        await actOnPhone(page, 'fallback');
        const code = await codeOnPhone(page);
        await page.waitForSelector(inElement('#code-form:not([hidden])'));
        await expect(page.textContent(inElement('#screen'))).resolves.toContain('sent a code by SMS');
        // The API does not say the fallback code's length: the field takes the spec's 4 to 8 digits.
        await expect(page.textContent(inElement('#code-label'))).resolves.toBe(
          'Enter the code (4 to 8 digits)',
        );
        // The host heard about it too.
        await page
          .locator('#host-events li[data-event="verification.code_required"]', { hasText: masked })
          .waitFor();
        await browser.screenshot(page, '09-operator-fallback-code');
        await enterCode(page, code);
        // The operator confirms the accepted code asynchronously; the page keeps polling meanwhile.
        await expectVerified(page, masked);
      },
    );

    flow(
      'operator_id: denied on the phone, the page says it failed and the host records it',
      async (page) => {
        const masked = await start(page, 8, 'operator_id');
        await actOnPhone(page, 'deny');
        await waitForPhase(page, 'failed');
        await expect(page.textContent(inElement('#title'))).resolves.toBe('We could not verify your number');
        await page
          .locator('#host-events li[data-event="verification.failed"]', { hasText: masked })
          .waitFor();
        await expect(
          page.locator('#verified-numbers li[data-verified-number="+7******6708"]').count(),
        ).resolves.toBe(0);
      },
    );
  },
);
