import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { BrowserContextOptions, Page } from 'playwright-core';
import { bundlePageScript, launchChromium, openTestPage } from '../support/chromium.js';

/**
 * `<phone-verification>` in Chromium: the element bundled from its sources with esbuild (as a host's
 * bundler would), on a page served on the host app's own origin, with axe-core at hand
 * (`window.axe`). `window.events` records the element's DOM events as the host receives them.
 */
const ELEMENT_SCRIPT = `
  const events = [];
  const el = document.querySelector('phone-verification');
  // The module's clock is the sandbox's: a test that moves it moves clockOffset too.
  window.clockOffset ??= 0;
  el.clientOptions = { serverNow: () => Date.now() + window.clockOffset };
  if (location.search.includes('stream=off')) el.clientOptions.eventSource = null;
  if (location.search.includes('header=on')) el.headers = async () => ({ 'x-host-token': 'token-1' });
  await import('../../src/element/index.js');
  for (const type of ['verified', 'failed', 'expired', 'canceled', 'error'])
    el.addEventListener(type, (event) => events.push({ type, detail: event.detail }));
  Object.assign(window, { events, el });
`;

/** The element rendered by React 19: properties as properties, `on<event>` props as listeners. */
const REACT_SCRIPT = `
  import '../../src/element/index.js';
  import { createElement as h } from 'react';
  import { createRoot } from 'react-dom/client';
  const events = [];
  const listener = (event) => events.push({ type: event.type, detail: event.detail });
  createRoot(document.getElementById('root')).render(
    h('phone-verification', {
      methods: 'auto sms',
      headers: { 'x-host-token': 'token-2' },
      credentials: 'header',
      texts: { start: 'Send me a code' },
      onverified: listener,
      oncanceled: listener,
    }),
  );
  const waitForElement = () => document.querySelector('phone-verification') ?? new Promise((r) => setTimeout(() => r(waitForElement()), 10));
  Object.assign(window, { events, el: await waitForElement() });
`;

export interface ElementBrowser {
  /**
   * A tab on `origin` with `<phone-verification attributes>` (and `el`, `events`, `axe` on window);
   * `?react=on`: the element as React renders it (REACT_SCRIPT).
   */
  open(origin: string, attributes?: string, query?: string, context?: BrowserContextOptions): Promise<Page>;
  close(): Promise<void>;
}

/** `clockOffset`: how far the module's clock (a sandbox's) is ahead of this machine's, when a page loads. */
export async function startElementBrowser(clockOffset: () => number = () => 0): Promise<ElementBrowser> {
  const dir = new URL('.', import.meta.url).pathname;
  const [script, reactScript] = await Promise.all([
    bundlePageScript(ELEMENT_SCRIPT, dir),
    bundlePageScript(REACT_SCRIPT, dir),
  ]);
  const axe = await readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  const browser = await launchChromium();
  return {
    open: (origin, attributes = '', query = '', context = {}) =>
      openTestPage(browser, {
        origin,
        query,
        context,
        serve: (url) =>
          url.includes('/__test/page')
            ? {
                contentType: 'text/html',
                body:
                  `<!doctype html><html lang="${url.includes('lang=ru') ? 'ru' : 'en'}"><title>t</title>` +
                  `<script>window.clockOffset = ${clockOffset()}</script>` +
                  `<main><h1>Sign in</h1><div id="root">` +
                  (url.includes('react=on')
                    ? ''
                    : `<phone-verification ${attributes}></phone-verification>`) +
                  `</div></main><script src="/__test/axe.js"></script>` +
                  `<script type="module" src="/__test/${url.includes('react=on') ? 'react' : 'element'}.js"></script>`,
              }
            : {
                contentType: 'text/javascript',
                body: url.includes('/axe.js') ? axe : url.includes('/react.js') ? reactScript : script,
              },
        ready: `'el' in window`,
      }),
    close: () => browser.close(),
  };
}

/** axe-core's violations on the page as it is now (the element's shadow DOM included), as `rule: targets`. */
export async function axeViolations(page: Page): Promise<string[]> {
  return page.evaluate<string[]>(`axe.run(document).then((r) =>
    r.violations.map((v) => v.id + ': ' + v.nodes.map((n) => JSON.stringify(n.target)).join(', ')))`);
}
