import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { bootstrapSampleApp, type SampleApp } from '../../sample-app/src/sample-app.js';
import { chromiumExecutable } from '../support/chromium.js';

export const SCREENSHOT_DIR = join(process.cwd(), 'test-output', 'screenshots');

const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** The sample app in sandbox mode on a free port, and a headless Chromium with a fresh profile. */
export interface SampleAppInBrowser {
  sample: SampleApp;
  /** A context of its own, for tests that want one (each `openPage` tab has its own). */
  context: BrowserContext;
  /** A new tab on the sample's page, loaded and wired (`body[data-ready]`). */
  openPage(): Promise<Page>;
  /** Runs `use` with a fresh tab and closes it afterwards (tests that run concurrently). */
  withPage(use: (page: Page) => Promise<void>): Promise<void>;
  screenshot(page: Page, name: string): Promise<void>;
  close(): Promise<void>;
}

export interface SampleAppInBrowserOptions {
  /** `polling`: the page's client runs as in a browser without EventSource (`?transport=polling`). */
  transport?: PageTransport;
}

export type PageTransport = 'stream' | 'polling';
export const PAGE_TRANSPORTS: PageTransport[] = ['stream', 'polling'];

export async function startSampleAppInBrowser(
  options: SampleAppInBrowserOptions = {},
): Promise<SampleAppInBrowser> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const executablePath = await chromiumExecutable();
  const sample = await bootstrapSampleApp({ port: 0, target: 'sandbox', logger: ['error', 'fatal'] });
  let browser: Browser;
  try {
    browser = await chromium.launch({ executablePath, headless: true, args: CHROMIUM_ARGS });
  } catch (error) {
    await sample.close();
    throw error;
  }
  const query = options.transport === 'polling' ? '?transport=polling' : '';
  // A context per tab: Chromium allows 6 HTTP/1.1 connections per host and profile, and each tab
  // holds two event streams (its status stream and the host's events) while the others poll.
  const newContext = async (): Promise<BrowserContext> => {
    const context = await browser.newContext({ viewport: { width: 1360, height: 960 }, locale: 'en-GB' });
    context.setDefaultTimeout(10_000);
    return context;
  };
  const context = await newContext();
  // Tabs open one at a time: a tab is a renderer process of its own, and five of them starting together on
  // two loaded cores kept a page from being wired within the 10 s wait. The flows still run side by side.
  let opening: Promise<unknown> = Promise.resolve();
  const openPage = (): Promise<Page> => {
    const opened = opening.then(async () => {
      const page = await (await newContext()).newPage();
      await page.goto(`${sample.url}/${query}`);
      await page.waitForSelector('body[data-ready="true"]');
      return page;
    });
    opening = opened.catch(() => undefined);
    return opened;
  };
  return {
    sample,
    context,
    openPage,
    async withPage(use) {
      const page = await openPage();
      try {
        await use(page);
      } finally {
        await page.context().close();
      }
    },
    async screenshot(page, name) {
      await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}.png`), fullPage: true });
    },
    async close() {
      await browser.close();
      await sample.close();
    },
  };
}

/** A test body that gets its own tab (and the shared app and browser). */
export type PageTest = (page: Page, browser: SampleAppInBrowser) => Promise<void>;

/**
 * One app and browser for a file whose tests run side by side (`it.concurrent`), each in its own
 * tab. Jest may start concurrent tests before `beforeAll` hooks, so the start is awaited per test.
 */
export function sharedSampleAppInBrowser(options: SampleAppInBrowserOptions = {}): {
  inPage(test: PageTest): () => Promise<void>;
  close(): Promise<void>;
} {
  const ready = startSampleAppInBrowser(options);
  ready.catch(() => undefined); // reported by every test that awaits it
  return {
    inPage: (test) => async () => {
      const browser = await ready;
      await browser.withPage((page) => test(page, browser));
    },
    close: async () => {
      await (await ready.catch(() => undefined))?.close();
    },
  };
}

/** A selector inside the page's `<phone-verification>` (Playwright's CSS pierces its open shadow root). */
export const inElement = (selector: string): string => `phone-verification ${selector}`;

/** The element once its verification is in `phase` (`data-phase` on the element). */
export async function waitForPhase(page: Page, phase: string): Promise<void> {
  await page.waitForSelector(`phone-verification[data-phase="${phase}"]`);
}

/** Types the number, picks the method and starts; resolves once the method's screen is shown. */
export async function startVerification(page: Page, phoneNumber: string, method: string): Promise<void> {
  await page.fill(inElement('#phone'), phoneNumber);
  await page.check(inElement(`input[name="method"][value="${method}"]`));
  await page.click(inElement('#go'));
  await page.waitForSelector(inElement('#task:not([hidden])'));
}

/** The code the simulated phone shows for the newest session (waits until it arrives). */
export async function codeOnPhone(page: Page): Promise<string> {
  const code = page.locator('#phone-screen .phone-item').first().locator('[data-code]');
  await code.waitFor();
  return (await code.getAttribute('data-code'))!;
}

/** Presses a button of the newest session on the simulated phone. */
export async function actOnPhone(page: Page, action: string): Promise<void> {
  await page.locator('#phone-screen .phone-item').first().locator(`button[data-action="${action}"]`).click();
}

/** The text of an element once it has one (a message is written when the answer arrives). */
export async function shownText(page: Page, selector: string): Promise<string> {
  const element = page.locator(selector).filter({ hasText: /./ });
  await element.waitFor({ state: 'attached' });
  return (await element.textContent()) ?? '';
}

/** Types (or pastes) the code: a code of the announced length submits itself; one of 4 to 8 digits needs Confirm. */
export async function enterCode(page: Page, code: string): Promise<void> {
  const exact = await page.evaluate<boolean>(
    `!!document.querySelector('phone-verification').client.getState().prompt?.length`,
  );
  await page.fill(inElement('#code'), code);
  if (!exact) await page.click(inElement('#check'));
}

/** A code of the same length that is not `code`. */
export function wrongCodeFor(code: string): string {
  return code
    .split('')
    .map((digit) => String((Number(digit) + 1) % 10))
    .join('');
}
