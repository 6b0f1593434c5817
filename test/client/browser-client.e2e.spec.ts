import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Page } from 'playwright-core';
import { SandboxControlClient, VerificationSandbox } from '../../src/testing/index.js';
import { type Platform, type TestApp } from '../support/verification-app.js';
import { startClientBrowser, type ClientBrowser } from './browser-page.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

const TRANSPORTS = [
  ['stream', ''],
  ['polling', '?stream=off'],
] as const;

/**
 * The built client in Chromium against a host app, with the sandbox as the phone's world. On Fastify:
 * the sample app's browser tests (test/sample-app) run on Express, so a browser meets both platforms;
 * the routes themselves run on both in test/client-routes and test/status-stream.
 */
const BROWSER_PLATFORMS: Platform[] = ['fastify'];

describe.each(BROWSER_PLATFORMS)('browser client in Chromium (%s)', (platform) => {
  const suite = sandboxSuite({ freezeClock: false });
  let sb: VerificationSandbox;
  let control: SandboxControlClient;
  let host: TestApp;
  let browser: ClientBrowser;
  let nextNumber = 20;
  const phoneNumber = (): string => `+79123456${platform === 'express' ? '6' : '7'}${nextNumber++}`;

  beforeAll(async () => {
    sb = suite.sb;
    control = new SandboxControlClient(sb.url);
    host = await suite.boot({
      platform,
      module: {
        api: { baseUrl: sb.url, apiKey: sb.demoAccount.apiKey, apiSecret: sb.demoAccount.apiSecret },
        clock: () => sb.now(),
        limits: { enabled: false },
      },
    });
    browser = await startClientBrowser();
  });
  afterAll(async () => {
    await browser?.close();
  });

  /** Every request the page made to the status routes, by kind. */
  function watchStatusRequests(page: Page): { polls: number; streams: number } {
    const counts = { polls: 0, streams: 0 };
    page.on('request', (request) => {
      const path = new URL(request.url()).pathname;
      if (/\/status\/[^/]+\/events$/.test(path)) counts.streams += 1;
      else if (path.startsWith('/verification/status/')) counts.polls += 1;
    });
    return counts;
  }

  /** The client's state after `expression` (run in the page, where `client` is the client). */
  const inPage = (page: Page, expression: string): Promise<Record<string, unknown>> =>
    page.evaluate<Record<string, unknown>>(expression);

  const phase = (page: Page): Promise<string> => page.evaluate<string>('client.getState().phase');

  describe.each(TRANSPORTS)('over %s', (transport, query) => {
    it('sms: the code from the phone verifies', async () => {
      const page = await browser.open(host.url, 'client', query);
      const requests = watchStatusRequests(page);
      try {
        const number = phoneNumber();
        const started = await inPage(page, `client.start({ phoneNumber: '${number}', method: 'sms' })`);
        expect(started).toMatchObject({
          phase: 'awaiting_user',
          prompt: { kind: 'code', length: 6 },
          connection: transport,
        });
        const session = (await control.sessionsFor(number))[0]!;
        await control.deliver(session.requestId);
        const code = (await control.getSession(session.requestId)).code!;
        const checked = await inPage(page, `client.check('${code}')`);
        expect(checked).toMatchObject({ phase: 'verified', status: 'verified' });
        if (transport === 'polling') expect(requests.streams).toBe(0);
      } finally {
        await page.context().close();
      }
    });

    it('reverse flash call: the user calls the number shown, and the outcome reaches the page', async () => {
      const page = await browser.open(host.url, 'client', query);
      const requests = watchStatusRequests(page);
      try {
        const number = phoneNumber();
        const started = await inPage(
          page,
          `client.start({ phoneNumber: '${number}', method: 'reverse_flash_call' })`,
        );
        expect(started.prompt).toMatchObject({ kind: 'call', telHref: expect.stringMatching(/^tel:\+\d+$/) });
        if (transport === 'stream') await page.waitForFunction(`seen.some((s) => s.connection === 'stream')`);
        const session = (await control.sessionsFor(number))[0]!;
        await control.call(session.requestId, number);
        await page.waitForFunction(`client.getState().phase === 'verified'`);
        await expect(phase(page)).resolves.toBe('verified');
        if (transport === 'stream') {
          // Pushed: no status poll while the stream was open.
          expect(requests.streams).toBe(1);
          expect(requests.polls).toBe(0);
        } else {
          expect(requests.streams).toBe(0);
          expect(requests.polls).toBeGreaterThan(0);
        }
      } finally {
        await page.context().close();
      }
    });
  });

  it('the React hook: start, a wrong code, a reload that resumes, then the right code, rendered by the component', async () => {
    const page = await browser.open(host.url, 'hook');
    try {
      const number = phoneNumber();
      await page.evaluate(`window.phoneNumber = '${number}'`);
      await expect(page.textContent('#phase')).resolves.toBe('idle');
      await page.click('#start');
      await page.locator('#phase', { hasText: 'awaiting_user' }).waitFor();
      await expect(page.textContent('#length')).resolves.toBe('6');
      // The countdown re-renders the component as the server's time passes.
      const first = Number(await page.textContent('#expires'));
      await page.waitForFunction(`Number(document.getElementById('expires')?.textContent) < ${first}`);
      const session = (await control.sessionsFor(number))[0]!;
      await control.deliver(session.requestId);
      const code = (await control.getSession(session.requestId)).code!;
      await page.fill(
        '#code',
        code
          .split('')
          .map((d) => String((Number(d) + 1) % 10))
          .join(''),
      );
      await page.click('#check');
      await expect(page.locator('#error').textContent()).resolves.toBe('invalid_code:2');
      // A reload: the hook resumes the verification the tab had by default (no `resume` option).
      await page.reload();
      await page.locator('#phase', { hasText: 'awaiting_user' }).waitFor({ timeout: 5000 });
      await page.fill('#code', code);
      await page.click('#check');
      await page.locator('#phase', { hasText: 'verified' }).waitFor();
    } finally {
      await page.context().close();
    }
  });

  it("the React hook given the page's client leaves it running when its component unmounts", async () => {
    const page = await browser.open(host.url, 'given');
    try {
      await page.evaluate(`window.client.start({ phoneNumber: '${phoneNumber()}', method: 'sms' })`);
      await page.locator('#phase', { hasText: 'awaiting_user' }).waitFor();
      await page.evaluate('window.unmount()');
      await expect(page.evaluate('window.client.getState().phase')).resolves.toBe('awaiting_user');
    } finally {
      await page.context().close();
    }
  });
});
