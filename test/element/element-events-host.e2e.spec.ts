/**
 * `<phone-verification>`'s events reach a host that listens above the element (on `document`, as a page's
 * analytics or a framework's delegated handler does): they bubble up from the element. In Chromium, against a
 * host app on Express and on Fastify.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Page } from 'playwright-core';
import type { VerificationSandbox } from '../../src/testing/index.js';
import type { TestApp } from '../support/verification-app.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { startElementBrowser, type ElementBrowser } from './element-page.js';

const FLOW_TIMEOUT_MS = 60_000;

describe('<phone-verification>: its events as a host listening above it hears them', () => {
  let browser: ElementBrowser;
  afterAll(async () => {
    await browser?.close();
  });
  const suite = sandboxSuite({ freezeClock: false });
  let sb: VerificationSandbox;
  const hosts: Partial<Record<'express' | 'fastify', TestApp>> = {};

  beforeAll(async () => {
    sb = suite.sb;
    const api = { baseUrl: sb.url, apiKey: sb.demoAccount.apiKey, apiSecret: sb.demoAccount.apiSecret };
    for (const platform of ['express', 'fastify'] as const)
      hosts[platform] = await suite.boot({
        platform,
        module: { api, clock: () => sb.now(), limits: { enabled: false } },
      });
    browser = await startElementBrowser(() => sb.now() - Date.now());
  });

  const el = (page: Page, selector: string) => page.locator(`phone-verification ${selector}`);

  it.each([
    ['express', '912 345-77-01'],
    ['fastify', '912 345-77-02'],
  ] as const)(
    '%s: the canceled event reaches a listener on document, from the element',
    async (platform, nat) => {
      const page = await browser.open(hosts[platform]!.url, 'methods="sms"');
      try {
        await page.evaluate(`
          window.heard = [];
          document.addEventListener('canceled', (event) =>
            window.heard.push({ type: event.type, from: event.target.localName, method: event.detail.method }));
        `);
        await el(page, '#phone').pressSequentially(nat.replace(/\D/g, ''));
        await el(page, '#go').click();
        await page.waitForFunction(`el.client.getState().phase !== 'starting'`);
        await el(page, '#cancel').click();
        await page.waitForFunction('window.heard.length > 0');
        await expect(page.evaluate('window.heard')).resolves.toEqual([
          { type: 'canceled', from: 'phone-verification', method: 'sms' },
        ]);
      } finally {
        await page.close();
      }
    },
    FLOW_TIMEOUT_MS,
  );
});
