/**
 * `<phone-verification>` configured the usual way: the page imports the element (which defines it and
 * upgrades the one already in the document) and sets `headers` on the next line. The host's routes
 * require the header (a global guard answers 401 without it): the element's first requests, `GET
 * /methods` and, after a reload, the resume's `GET /status`, carry it. In Chromium, over real HTTP.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { APP_GUARD } from '@nestjs/core';
import {
  ForbiddenException,
  Injectable,
  UnauthorizedException,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import type { Browser, Page } from 'playwright-core';
import { SandboxControlClient, VerificationSandbox } from '../../src/testing/index.js';
import { bundlePageScript, launchChromium, openTestPage } from '../support/chromium.js';
import { type TestApp } from '../support/verification-app.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

const FLOW_TIMEOUT_MS = 60_000;
const TOKEN = 'Bearer host-token';

/** Every request the host's guard saw: `METHOD path`, and whether it carried the token. */
const seen: { request: string; authorized: boolean }[] = [];

/** A host's bearer guard: no token, 401; a token it knows but does not let in, 403. */
@Injectable()
class BearerGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const req = context
      .switchToHttp()
      .getRequest<{ method: string; url: string; headers: Record<string, string> }>();
    const authorized = req.headers.authorization === TOKEN;
    seen.push({ request: `${req.method} ${req.url.split('?')[0]}`, authorized });
    if (req.headers.authorization === 'Bearer barred') throw new ForbiddenException();
    if (!authorized) throw new UnauthorizedException();
    return true;
  }
}

/** The page's script: the import, then the configuration on the next lines (the same task). */
const SCRIPT = `
  import '../../src/element/index.js';
  const el = document.querySelector('phone-verification');
  const token = location.search.match(/token=(\\w+)/)?.[1];
  el.headers = { authorization: token ? 'Bearer ' + token : '${TOKEN}' };
  el.clientOptions = { serverNow: () => Date.now() + window.clockOffset };
  const events = [];
  for (const type of ['verified', 'failed', 'expired', 'canceled', 'error'])
    el.addEventListener(type, (event) => events.push({ type, detail: event.detail }));
  Object.assign(window, { events, el });
`;

describe('<phone-verification> configured on the line after its import', () => {
  let browser: Browser;
  afterAll(async () => {
    await browser?.close();
  });
  const suite = sandboxSuite({ freezeClock: false });
  let sb: VerificationSandbox;
  let control: SandboxControlClient;
  let host: TestApp;
  let script: string;

  beforeAll(async () => {
    sb = suite.sb;
    control = new SandboxControlClient(sb.url);
    host = await suite.boot({
      platform: 'express',
      module: {
        api: { baseUrl: sb.url, apiKey: sb.demoAccount.apiKey, apiSecret: sb.demoAccount.apiSecret },
        clock: () => sb.now(),
        limits: { enabled: false },
      },
      providers: [{ provide: APP_GUARD, useClass: BearerGuard }],
    });
    script = await bundlePageScript(SCRIPT, new URL('.', import.meta.url).pathname);
    browser = await launchChromium();
  });

  const el = (page: Page, selector: string) => page.locator(`phone-verification ${selector}`);

  function open(query = ''): Promise<Page> {
    return openTestPage(browser, {
      origin: host.url,
      query,
      serve: (url) =>
        url.includes('/__test/page')
          ? {
              contentType: 'text/html',
              body:
                `<!doctype html><html lang="en"><title>t</title>` +
                `<script>window.clockOffset = ${sb.now() - Date.now()}</script>` +
                `<main><phone-verification methods="all" credentials="header"></phone-verification></main>` +
                `<script type="module" src="/__test/element.js"></script>`,
            }
          : { contentType: 'text/javascript', body: script },
      ready: `'el' in window`,
    });
  }

  const offered = (page: Page): Promise<string[]> =>
    el(page, 'input[name=method]').evaluateAll((inputs) =>
      inputs.map((i) => (i as unknown as { value: string }).value),
    );

  it(
    "the methods and, after a reload, the resumed verification: every request with the host's header",
    async () => {
      seen.length = 0;
      const served = (await (
        await fetch(`${host.url}/verification/methods`, { headers: { authorization: TOKEN } })
      ).json()) as { methods: { method: string }[] };
      const page = await open();
      try {
        // `methods="all"`: the server's methods, as `GET /methods` gave them (refused, none would be offered).
        await el(page, 'input[name=method][value=sms]').waitFor();
        await expect(offered(page)).resolves.toEqual(served.methods.map((m) => m.method));
        await el(page, '#phone').pressSequentially('9123457801');
        await el(page, 'input[name=method][value=sms]').check();
        await el(page, '#go').click();
        await el(page, '#code-form:not([hidden])').waitFor();

        await page.reload();
        await page.waitForFunction(`'el' in window`);
        await el(page, '#code-form:not([hidden])').waitFor();
        await expect(el(page, '#status').textContent()).resolves.toBe(
          'Welcome back: your verification goes on.',
        );
        const [session] = await control.sessionsFor('+79123457801');
        await control.deliver(session!.requestId);
        await el(page, '#code').fill((await control.getSession(session!.requestId)).code!);
        await el(page, '#title').waitFor();
        await expect(el(page, '#title').textContent()).resolves.toBe('Your number is verified');
        expect(((await page.evaluate('events')) as { type: string }[]).map((e) => e.type)).toEqual([
          'verified',
        ]);
        expect(seen.map((s) => s.request)).toEqual(
          expect.arrayContaining(['GET /verification/methods', 'POST /verification/start']),
        );
        expect(seen.some((s) => s.request.startsWith('GET /verification/status/'))).toBe(true);
        expect(seen.filter((s) => !s.authorized)).toEqual([]);
      } finally {
        await page.close();
      }
    },
    FLOW_TIMEOUT_MS,
  );

  it(
    'an element removed in the task that added it asks nothing; one added, removed and added again loads once',
    async () => {
      const page = await open();
      try {
        await el(page, 'input[name=method][value=sms]').waitFor();
        const requests: string[] = [];
        page.on('request', (request) => requests.push(new URL(request.url()).pathname));
        await page.evaluate(`{
          const make = (base) => {
            const made = document.createElement('phone-verification');
            made.setAttribute('credentials', 'header');
            made.setAttribute('base-url', base);
            made.setAttribute('methods', 'all');
            made.headers = { authorization: '${TOKEN}' };
            return made;
          };
          const gone = make('/gone');
          document.body.append(gone);
          gone.remove();
          const twice = make('/verification');
          document.body.append(twice);
          twice.remove();
          document.body.append(twice);
          window.twice = twice;
        }`);
        await page.locator('body > phone-verification').waitFor();
        await page.waitForFunction(
          `window.twice.shadowRoot.querySelector('input[name=method][value=sms]') !== null`,
        );
        // Anything else it would have asked has been asked by now.
        await page.waitForTimeout(300);
        expect(requests).toEqual(['/verification/methods']);
      } finally {
        await page.close();
      }
    },
    FLOW_TIMEOUT_MS,
  );

  it(
    'refused by the host (401, 403): an error event for the methods and one for the resume; the verification kept',
    async () => {
      const page = await open();
      try {
        await el(page, 'input[name=method][value=sms]').waitFor();
        seen.length = 0;
        await el(page, '#phone').pressSequentially('9123457802');
        await el(page, 'input[name=method][value=sms]').check();
        await el(page, '#go').click();
        await el(page, '#code-form:not([hidden])').waitFor();

        // The same tab with a token the host refuses: both requests the element makes on its own are refused.
        await page.goto(`${host.url}/__test/page?token=stale`);
        await page.waitForFunction(`'el' in window && events.length === 2`);
        const events = (await page.evaluate('events')) as { type: string; detail: Record<string, unknown> }[];
        expect(events.map((e) => [e.type, e.detail.error_code, e.detail.status])).toEqual([
          ['error', 'unexpected_response', 401],
          ['error', 'unexpected_response', 401],
        ]);
        expect(events.every((e) => e.detail.message === 'Something went wrong. Please try again.')).toBe(
          true,
        );
        expect(
          seen.filter((s) => !s.authorized).map((s) => s.request.replace(/\/status\/.*/, '/status/…')),
        ).toEqual(expect.arrayContaining(['GET /verification/methods', 'GET /verification/status/…']));
        // Forbidden rather than unauthenticated: the same two events.
        await page.goto(`${host.url}/__test/page?token=barred`);
        await page.waitForFunction(`'el' in window && events.length === 2`);
        const barred = (await page.evaluate('events')) as { detail: Record<string, unknown> }[];
        expect(barred.map((e) => e.detail.status)).toEqual([403, 403]);

        // The token renewed: the verification goes on.
        await page.goto(`${host.url}/__test/page`);
        await page.waitForFunction(`'el' in window`);
        await el(page, '#code-form:not([hidden])').waitFor();
        await expect(el(page, '#status').textContent()).resolves.toBe(
          'Welcome back: your verification goes on.',
        );
      } finally {
        await page.close();
      }
    },
    FLOW_TIMEOUT_MS,
  );
});
