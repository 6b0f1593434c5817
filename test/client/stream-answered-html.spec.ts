import { describe, expect, it, jest } from '@jest/globals';
import type { FetchLike, ResponseLike } from '../../src/client/transport.js';
import { answer, clientHarness } from './fake-routes.js';

/** A stream answer of `type` whose body is `chunks`, then its end. */
function streamAnswer(type: string, chunks: string[]): ResponseLike {
  const body = chunks.map((chunk) => new TextEncoder().encode(chunk));
  return {
    ok: true,
    status: 200,
    headers: { get: (name) => (name.toLowerCase() === 'content-type' ? type : null) },
    json: async () => ({}),
    body: {
      getReader: () => ({
        read: async () => (body.length > 0 ? { done: false, value: body.shift() } : { done: true }),
      }),
    },
  };
}

/**
 * A page whose routes need headers reads the status stream with fetch. Where the stream route is not
 * mounted (an older server, a path the proxy does not pass), a single-page app's catch-all or a proxy's
 * page answers it 200 with HTML; a proxy that buffers or cuts streams answers 200 `text/event-stream`
 * and ends it at once, with no message. An EventSource fails the first (its type is not
 * text/event-stream) and fires `error` at the second's end, and the page, having had no message, polls;
 * so must the fetch-based reader, never reconnect silently every 3 s while the page shows nothing.
 */
describe.each([
  ['answers 200 with an HTML page', () => streamAnswer('text/html; charset=utf-8', ['<!doctype html>\n'])],
  ['ends before its first message', () => streamAnswer('text/event-stream', [': ok\n\n'])],
])('VerificationClient with headers, when the stream route %s', (_, streamed) => {
  const harness = clientHarness();

  it('polls the status instead, shows what the status route answers, and opens the stream once', async () => {
    let streams = 0;
    const fetch: FetchLike = async (url, init) => {
      if (!url.endsWith('/events')) return harness.routes.fetch(url, init);
      streams += 1;
      return streamed();
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
