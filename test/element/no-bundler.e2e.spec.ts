/**
 * The no-bundler recipe of docs/frontend.md in Chromium: a page with an import map and the README's
 * snippet unchanged (`import 'nestjs-phone-verification/element'`), the element's files served as they
 * are from the package: its `dist/element/` and `dist/client/` side by side under one path, and only
 * files the packed tarball holds (`npm pack --dry-run`). The element defines itself, starts a
 * verification against the host's routes and verifies it with the code.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { SandboxControlClient, VerificationSandbox } from '../../src/testing/index.js';
import { launchChromium } from '../support/chromium.js';
import { type TestApp } from '../support/verification-app.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

/** Where the recipe serves the package's browser files (any path works; the two folders stay siblings). */
const VENDOR = '/vendor/phone-verification';
const FLOW_TIMEOUT_MS = 60_000;

/** The page of the recipe, as docs/frontend.md gives it. */
const PAGE = `<!doctype html><html lang="en"><title>Sign in</title>
<script type="importmap">
  { "imports": { "nestjs-phone-verification/element": "${VENDOR}/element/index.js" } }
</script>
<script type="module">
  import 'nestjs-phone-verification/element'; // defines <phone-verification>
</script>
<main><h1>Sign in</h1><phone-verification methods="sms"></phone-verification></main>`;

/** The package's files as the tarball ships them (paths from the package root). */
async function packedFiles(): Promise<Set<string>> {
  const { stdout } = await promisify(execFile)('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    encoding: 'utf8',
  });
  return new Set((JSON.parse(stdout) as { files: { path: string }[] }[])[0]!.files.map((file) => file.path));
}

describe('<phone-verification> without a bundler (import map, files served from the package)', () => {
  const suite = sandboxSuite({ freezeClock: false });
  let sb: VerificationSandbox;
  let control: SandboxControlClient;
  let host: TestApp;
  let browser: Browser;
  let packed: Set<string>;
  /** Every package file the page asked for, and any it asked for that the tarball lacks. */
  const served: string[] = [];
  const missing: string[] = [];

  beforeAll(async () => {
    // npm lists the tarball while the host and the browser start (one loaded core: seconds each).
    const listing = packedFiles();
    sb = suite.sb;
    control = new SandboxControlClient(sb.url);
    host = await suite.boot({
      platform: 'express',
      module: {
        api: { baseUrl: sb.url, apiKey: sb.demoAccount.apiKey, apiSecret: sb.demoAccount.apiSecret },
        clock: () => sb.now(),
        limits: { enabled: false },
      },
    });
    [packed, browser] = await Promise.all([listing, launchChromium()]);
  });
  afterAll(async () => {
    await browser?.close();
  });

  async function open(): Promise<Page> {
    const context = await browser.newContext();
    context.setDefaultTimeout(15_000);
    const page = await context.newPage();
    await page.route(`${host.url}/sign-in`, (route) =>
      route.fulfill({ contentType: 'text/html', body: PAGE }),
    );
    // The host's static files: `${VENDOR}/x` is the package's `dist/x`, for files the tarball ships.
    await page.route(`${host.url}${VENDOR}/**`, (route) => {
      const path = `dist/${new URL(route.request().url()).pathname.slice(VENDOR.length + 1)}`;
      if (!packed.has(path)) {
        missing.push(path);
        return route.fulfill({ status: 404, body: '' });
      }
      served.push(path);
      return route.fulfill({ contentType: 'text/javascript', body: readFileSync(join(process.cwd(), path)) });
    });
    await page.goto(`${host.url}/sign-in`);
    return page;
  }

  it(
    'the README snippet defines the element; a start and its code verify, with only dist/element and dist/client served',
    async () => {
      const page = await open();
      const el = (selector: string) => page.locator(`phone-verification ${selector}`);
      await page.waitForFunction(`customElements.get('phone-verification') !== undefined`);
      await el('#phone').pressSequentially('9123456801');
      await el('#go').click();
      await el('#code-form:not([hidden])').waitFor();
      const [session] = await control.sessionsFor('+79123456801');
      await control.deliver(session!.requestId);
      await el('#code').fill((await control.getSession(session!.requestId)).code!);
      await el('#title').waitFor();
      await expect(el('#title').textContent()).resolves.toBe('Your number is verified');
      await page.context().close();

      expect(missing).toEqual([]);
      expect(served).toContain('dist/element/index.js');
      expect(served).toContain('dist/client/index.js');
      expect(served.filter((path) => !/^dist\/(element|client)\/[\w.-]+\.js$/.test(path))).toEqual([]);
    },
    FLOW_TIMEOUT_MS,
  );
});
