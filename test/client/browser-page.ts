import { build } from 'esbuild';
import { chromium, type Browser, type Page } from 'playwright-core';
import { chromiumExecutable } from '../support/chromium.js';

/**
 * The real client in Chromium: bundled from its sources with esbuild (as a host's bundler would),
 * served on the host app's own origin (routes intercepted by the browser, so cookies and
 * `Sec-Fetch-Site` are those of a same-origin page), driven through `window` globals.
 */
const PAGE_SCRIPT = `
  import { createVerificationClient } from '../../src/client/index.js';
  const useStream = !location.search.includes('stream=off');
  const client = createVerificationClient({ eventSource: useStream ? undefined : null, webOtp: false });
  const seen = [];
  client.subscribe((state) => {
    const last = seen[seen.length - 1];
    if (!last || last.phase !== state.phase || last.connection !== state.connection)
      seen.push({ phase: state.phase, connection: state.connection });
  });
  Object.assign(window, { client, seen });
`;

const HOOK_SCRIPT = `
  import { createElement as h, useState } from 'react';
  import { createRoot } from 'react-dom/client';
  import { useVerification } from '../../src/client/react/index.js';
  function Verify() {
    const { state, start, check } = useVerification({ eventSource: null, webOtp: false });
    const [code, setCode] = useState('');
    return h('div', null,
      h('p', { id: 'phase' }, state.phase),
      state.prompt?.kind === 'code' ? h('p', { id: 'length' }, String(state.prompt.length)) : null,
      state.expiresInMs !== null ? h('p', { id: 'expires' }, String(state.expiresInMs)) : null,
      state.error ? h('p', { id: 'error' }, state.error.code + ':' + state.attemptsRemaining) : null,
      h('button', { id: 'start', onClick: () => start({ phoneNumber: window.phoneNumber, method: 'sms' }) }, 'start'),
      h('input', { id: 'code', autoComplete: 'one-time-code', inputMode: 'numeric', value: code, onChange: (e) => setCode(e.target.value) }),
      h('button', { id: 'check', onClick: () => check(code) }, 'check'));
  }
  createRoot(document.getElementById('root')).render(h(Verify));
`;

async function bundle(contents: string): Promise<string> {
  const result = await build({
    stdin: { contents, resolveDir: new URL('.', import.meta.url).pathname, loader: 'tsx' },
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

export interface ClientBrowser {
  /** A tab on `origin` with the client (`window.client`) or the React hook page (`hook`). */
  open(origin: string, page: 'client' | 'hook', query?: string): Promise<Page>;
  close(): Promise<void>;
}

export async function startClientBrowser(): Promise<ClientBrowser> {
  const [clientScript, hookScript] = await Promise.all([bundle(PAGE_SCRIPT), bundle(HOOK_SCRIPT)]);
  const browser: Browser = await chromium.launch({
    executablePath: await chromiumExecutable(),
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'],
  });
  return {
    async open(origin, kind, query = '') {
      const context = await browser.newContext();
      context.setDefaultTimeout(15_000);
      const page = await context.newPage();
      await page.route(`${origin}/__test/**`, (route) => {
        const url = route.request().url();
        if (url.includes('/__test/page'))
          return route.fulfill({
            contentType: 'text/html',
            body: `<!doctype html><div id="root"></div><script type="module" src="/__test/${kind}.js"></script>`,
          });
        return route.fulfill({
          contentType: 'text/javascript',
          body: url.includes('/hook.js') ? hookScript : clientScript,
        });
      });
      await page.goto(`${origin}/__test/page${query}`);
      await page.waitForFunction(`'client' in window || document.getElementById('phase') !== null`);
      return page;
    },
    close: () => browser.close(),
  };
}
