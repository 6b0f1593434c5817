import { describe, expect, it, jest } from '@jest/globals';

// The stream reader's chunk does not load (a deploy removed its hashed file, the network dropped it):
// the page's import() of it rejects.
jest.unstable_mockModule('../../src/client/fetch-event-source.js', () => {
  throw new TypeError('Failed to fetch dynamically imported module');
});
const { answer, clientHarness } = await import('./fake-routes.js');

/**
 * A page whose routes need headers (a bearer token) reads the status stream with fetch, loaded on the
 * stream's first use. When that load fails, the page follows the status by polling, as after any stream
 * that cannot open: it is never left waiting on a stream that will not come.
 */
describe('VerificationClient with headers, when the stream reader cannot be loaded', () => {
  const harness = clientHarness();

  it('polls the status instead, and shows what the status route answers', async () => {
    const c = harness.client({
      eventSource: undefined,
      headers: () => ({ authorization: 'Bearer page-token' }),
    });
    const sent = answer(harness.routes);
    harness.routes.on('POST /start', { status: 201, body: sent });
    harness.routes.on('GET /status', { status: 200, body: { ...sent, status: 'verified' } });
    await c.start({ phoneNumber: '+79123456789', method: 'sms' });
    await jest.advanceTimersByTimeAsync(100);
    expect(harness.routes.count('GET /status')).toBeGreaterThanOrEqual(1);
    expect(harness.routes.requests.at(-1)!.init.headers).toMatchObject({
      authorization: 'Bearer page-token',
    });
    expect(c.getState()).toMatchObject({ phase: 'verified' });
  });
});
