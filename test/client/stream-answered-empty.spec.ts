import { describe, expect, it, jest } from '@jest/globals';
import type { FetchLike, ResponseLike } from '../../src/client/transport.js';
import { answer, clientHarness } from './fake-routes.js';

/**
 * A page whose routes need headers reads the status stream with fetch. A proxy that buffers or cuts
 * streams answers it 200 `text/event-stream` and ends it at once, with no message. An EventSource fires
 * `error` at each end, and the page, having had no message, polls; so must the fetch-based reader,
 * never reconnect silently every 3 s while the page shows nothing.
 */
describe('VerificationClient with headers, when the stream ends before its first message', () => {
  const harness = clientHarness();

  it('polls the status instead, shows what the status route answers, and opens the stream once', async () => {
    let streams = 0;
    const fetch: FetchLike = async (url, init) => {
      if (!url.endsWith('/events')) return harness.routes.fetch(url, init);
      streams += 1;
      const response: ResponseLike = {
        ok: true,
        status: 200,
        headers: { get: (name) => (name.toLowerCase() === 'content-type' ? 'text/event-stream' : null) },
        json: async () => ({}),
        body: { getReader: () => ({ read: async () => ({ done: true }) }) },
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
    expect(streams).toBe(1);
  });
});
