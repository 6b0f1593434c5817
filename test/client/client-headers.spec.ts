import { describe, expect, it, jest } from '@jest/globals';
import type { FetchLike } from '../../src/client/transport.js';
import { answer, clientHarness } from './fake-routes.js';

/**
 * The client's `headers` (a host guard's bearer token): an object is sent as it is, a function is asked
 * on each call. Either goes with every route's call and with the status stream, which is then read with
 * fetch (an EventSource cannot send headers). A plain-JS page passing an object must not get a
 * `network_error` for every call.
 */
describe('VerificationClient headers', () => {
  const harness = clientHarness();

  it.each([
    ['an object', () => ({ authorization: 'Bearer A' })],
    ['a function', () => () => ({ authorization: 'Bearer A' })],
  ])('given as %s, they go with each call and with the stream', async (_, given) => {
    const streamed: (string | undefined)[] = [];
    const fetch: FetchLike = async (url, init) => {
      if (!url.endsWith('/events')) return harness.routes.fetch(url, init);
      streamed.push(init.headers.authorization);
      throw new TypeError('no stream here');
    };
    harness.routes.on('POST /start', { status: 201, body: answer(harness.routes) });
    harness.routes.on('GET /status', { status: 200, body: answer(harness.routes, { status: 'verified' }) });
    const c = harness.client({ fetch, headers: given(), eventSource: undefined });
    await c.start({ phoneNumber: '+79123456789', method: 'sms' });
    await jest.advanceTimersByTimeAsync(30_000);
    expect(c.getState().error).toBeNull();
    expect(c.getState().phase).toBe('verified');
    const sent = harness.routes.requests.map((r) => [r.route, r.init.headers.authorization]);
    expect(sent[0]).toEqual(['POST /start', 'Bearer A']);
    expect(sent.every(([, token]) => token === 'Bearer A')).toBe(true);
    expect(streamed).toEqual(['Bearer A']);
  });

  it('a function is asked on each call: a token that changes goes with the next call', async () => {
    let token = 'T-1';
    harness.routes.on('POST /start', { status: 201, body: answer(harness.routes) });
    harness.routes.on('GET /status', { status: 200, body: answer(harness.routes, { status: 'verified' }) });
    const c = harness.client({ headers: () => ({ authorization: `Bearer ${token}` }), eventSource: null });
    await c.start({ phoneNumber: '+79123456789', method: 'sms' });
    token = 'T-2';
    await jest.advanceTimersByTimeAsync(30_000);
    const tokens = harness.routes.requests.map((r) => `${r.route} ${r.init.headers.authorization}`);
    expect(tokens[0]).toBe('POST /start Bearer T-1');
    expect(tokens.slice(1)).toContain('GET /status Bearer T-2');
  });
});
