import { describe, expect, it, jest } from '@jest/globals';
import type { FetchLike, ResponseLike } from '../../src/client/transport.js';
import { answer, clientHarness } from './fake-routes.js';

/**
 * A page whose routes need headers reads the status stream with fetch. Where the stream route is not
 * mounted (an older server, a path the proxy does not pass), a single-page app's catch-all or a proxy's
 * page answers it 200 with HTML. An EventSource fails such an answer (its type is not text/event-stream)
 * and the page polls; so must the fetch-based reader, not read it as a stream that keeps ending.
 */
describe('VerificationClient with headers, when the stream route answers 200 with an HTML page', () => {
  const harness = clientHarness();

  it('polls the status instead, and shows what the status route answers', async () => {
    let streams = 0;
    const fetch: FetchLike = async (url, init) => {
      if (!url.endsWith('/events')) return harness.routes.fetch(url, init);
      streams += 1;
      const page = [new TextEncoder().encode('<!doctype html><html><body>app</body></html>\n')];
      const response: ResponseLike = {
        ok: true,
        status: 200,
        headers: {
          get: (name) => (name.toLowerCase() === 'content-type' ? 'text/html; charset=utf-8' : null),
        },
        json: async () => ({}),
        body: {
          getReader: () => ({
            read: async () => (page.length > 0 ? { done: false, value: page.shift() } : { done: true }),
          }),
        },
      };
      return response;
    };
    harness.routes.on('POST /start', { status: 201, body: answer(harness.routes) });
    harness.routes.on('GET /status', { status: 200, body: answer(harness.routes, { status: 'verified' }) });
    const c = harness.client({
      fetch,
      headers: () => ({ authorization: 'Bearer T-1' }),
      eventSource: undefined,
    });
    await c.start({ phoneNumber: '+79123456789', method: 'sms' });
    await jest.advanceTimersByTimeAsync(30_000);
    expect(harness.routes.count('GET /status')).toBeGreaterThanOrEqual(1);
    expect(c.getState().phase).toBe('verified');
    // The HTML is asked for once, not again every 3 s.
    expect(streams).toBe(1);
  });
});
