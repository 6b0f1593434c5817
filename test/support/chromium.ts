import { build } from 'esbuild';
import { chromium, type Browser, type BrowserContextOptions, type Page } from 'playwright-core';
import { chromiumExecutable } from '../global-setup.js';

/** The browser of the browser tests (resolved in test/global-setup.ts, where jest's global setup can load it). */
export { chromiumExecutable, DEBIAN_CHROMIUM } from '../global-setup.js';

/** Headless Chromium, as the browser tests run it. */
export async function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: await chromiumExecutable(),
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'],
  });
}

/** A page's module script bundled from its sources by esbuild, as a host's bundler would; imports resolve from `dir`. */
export async function bundlePageScript(contents: string, dir: string): Promise<string> {
  const result = await build({
    stdin: { contents, resolveDir: dir, loader: 'tsx' },
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    write: false,
    define: { 'process.env.NODE_ENV': '"production"' },
    logLevel: 'silent',
  });
  return result.outputFiles[0]!.text;
}

export interface TestPage {
  /** Where the tab goes: `${origin}/__test/page…`. */
  origin: string;
  query?: string;
  /** The page (`/__test/page`) and its scripts (`/__test/*.js`), by URL. */
  serve(url: string): { contentType: string; body: string };
  /** A page expression that is true once the page's script has run. */
  ready: string;
  context?: BrowserContextOptions;
}

/**
 * A new tab on the host app's own origin, whose `/__test/**` requests the test answers itself
 * (intercepted by the browser): cookies and `Sec-Fetch-Site` are those of a same-origin page.
 */
export async function openTestPage(browser: Browser, page: TestPage): Promise<Page> {
  const context = await browser.newContext(page.context ?? {});
  context.setDefaultTimeout(15_000);
  const tab = await context.newPage();
  await tab.route(`${page.origin}/__test/**`, (route) => route.fulfill(page.serve(route.request().url())));
  await tab.goto(`${page.origin}/__test/page${page.query ?? ''}`);
  await tab.waitForFunction(page.ready);
  return tab;
}
