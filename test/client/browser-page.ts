import type { Page } from 'playwright-core';
import { bundlePageScript, launchChromium, openTestPage } from '../support/chromium.js';

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

/** The hook given the page's own client (`window.client`), in a component the page can unmount (`window.unmount`). */
const GIVEN_SCRIPT = `
  import { createElement as h } from 'react';
  import { createRoot } from 'react-dom/client';
  import { createVerificationClient } from '../../src/client/index.js';
  import { useVerification } from '../../src/client/react/index.js';
  const client = createVerificationClient({ eventSource: null, webOtp: false });
  function Phase() {
    return h('p', { id: 'phase' }, useVerification({ client }).state.phase);
  }
  const root = createRoot(document.getElementById('root'));
  root.render(h(Phase));
  Object.assign(window, { client, unmount: () => root.unmount() });
`;

export interface ClientBrowser {
  /** A tab on `origin` with the client (`window.client`), the React hook page (`hook`) or the hook given a client (`given`). */
  open(origin: string, page: 'client' | 'hook' | 'given', query?: string): Promise<Page>;
  close(): Promise<void>;
}

export async function startClientBrowser(): Promise<ClientBrowser> {
  const dir = new URL('.', import.meta.url).pathname;
  const [clientScript, hookScript, givenScript] = await Promise.all([
    bundlePageScript(PAGE_SCRIPT, dir),
    bundlePageScript(HOOK_SCRIPT, dir),
    bundlePageScript(GIVEN_SCRIPT, dir),
  ]);
  const scriptOf = (url: string) =>
    url.includes('/hook.js') ? hookScript : url.includes('/given.js') ? givenScript : clientScript;
  const browser = await launchChromium();
  return {
    open: (origin, kind, query = '') =>
      openTestPage(browser, {
        origin,
        query,
        serve: (url) =>
          url.includes('/__test/page')
            ? {
                contentType: 'text/html',
                body: `<!doctype html><div id="root"></div><script type="module" src="/__test/${kind}.js"></script>`,
              }
            : { contentType: 'text/javascript', body: scriptOf(url) },
        ready: `'client' in window || document.getElementById('phase') !== null`,
      }),
    close: () => browser.close(),
  };
}
