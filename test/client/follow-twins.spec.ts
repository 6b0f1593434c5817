import { describe, expect, it, jest } from '@jest/globals';
import type { VerificationClient } from '../../src/client/index.js';
import { answer, clientHarness, journey } from './fake-routes.js';

/**
 * Polling and streaming are twins: one table of answers, served over `GET /status` or pushed on the
 * status stream, must give the page the same states, and the status reads of either carry the
 * journey token once a switch gave one.
 */
const MODES = ['polling', 'streaming'] as const;

describe.each(MODES)('VerificationClient follows the status the same way (%s)', (mode) => {
  const harness = clientHarness();

  const client = (): VerificationClient =>
    harness.client(mode === 'streaming' ? { eventSource: harness.routes.eventSource } : {});
  /** The server says `body`: the next poll reads it, or the open stream pushes it. */
  const serve = async (body: Record<string, unknown>): Promise<void> => {
    harness.routes.on('GET /status', { status: 200, body });
    if (mode === 'streaming') harness.routes.streams.at(-1)!.push(body);
    await jest.advanceTimersByTimeAsync(2500);
  };
  /** Where the client reads the status from now: the last poll's URL, or the open stream's. */
  const readUrl = (): string =>
    mode === 'streaming'
      ? harness.routes.streams.at(-1)!.url
      : harness.routes.requests.filter((r) => r.route === 'GET /status').at(-1)!.url;
  /** What the page sees, less how it is connected. */
  const seen = (c: VerificationClient) => {
    const { connection: _connection, ...state } = c.getState() as unknown as Record<string, unknown>;
    return state;
  };

  it('the same states for sent, delivered, a switch and verified; the reads after the switch carry its token', async () => {
    const c = client();
    const sent = answer(harness.routes, journey(harness.routes, ['sms'], ['flash_call'], 0));
    harness.routes.on('POST /start', { status: 201, body: sent });
    harness.routes.on('GET /status', { status: 200, body: sent });
    await c.start({ phoneNumber: '+79123456789', method: 'sms' });
    await jest.advanceTimersByTimeAsync(0);
    expect(seen(c)).toMatchObject({ phase: 'awaiting_user', method: 'sms' });

    await serve({ ...sent, status: 'delivered' });
    expect(seen(c)).toMatchObject({ phase: 'awaiting_user', method: 'sms' });
    expect(readUrl()).not.toContain('journey_token');

    const switched = {
      ...answer(harness.routes, journey(harness.routes, ['sms', 'flash_call'], [], null)),
      code_length: 4,
    };
    harness.routes.on('POST /switch', { status: 201, body: { ...switched, journey_token: 'JT-9' } });
    await c.switchMethod('flash_call');
    await serve(switched);
    expect(seen(c)).toMatchObject({
      phase: 'awaiting_user',
      method: 'flash_call',
      methodsTried: ['sms', 'flash_call'],
    });
    expect(readUrl()).toBe(
      '/verification/status/VID-1' + (mode === 'streaming' ? '/events' : '') + '?journey_token=JT-9',
    );

    await serve({ ...switched, status: 'verified' });
    expect(seen(c)).toMatchObject({ phase: 'verified' });
    const polls = harness.routes.count('GET /status');
    await jest.advanceTimersByTimeAsync(10_000);
    // Once verified, nothing more is read, over either path.
    expect(harness.routes.count('GET /status')).toBe(polls);
    if (mode === 'streaming') expect(harness.routes.streams.every((s) => s.closed)).toBe(true);
  });
});

describe('VerificationClient polls at the pace the server says', () => {
  const harness = clientHarness();

  it('poll_interval_ms of the last answer: nothing a tick before it, one read at it', async () => {
    const c = harness.client();
    const sent = { ...answer(harness.routes), poll_interval_ms: 7000 };
    harness.routes.on('POST /start', { status: 201, body: sent });
    harness.routes.on('GET /status', { status: 200, body: sent });
    await c.start({ phoneNumber: '+79123456789', method: 'sms' });
    // The start's interval until the first read; from then on, the one each answer gives.
    await jest.advanceTimersByTimeAsync(7000);
    const first = harness.routes.count('GET /status');
    expect(first).toBeGreaterThanOrEqual(1);
    await jest.advanceTimersByTimeAsync(6999);
    expect(harness.routes.count('GET /status')).toBe(first);
    await jest.advanceTimersByTimeAsync(1);
    expect(harness.routes.count('GET /status')).toBe(first + 1);
    harness.routes.on('GET /status', { status: 200, body: { ...sent, poll_interval_ms: 3000 } });
    await jest.advanceTimersByTimeAsync(7000);
    expect(harness.routes.count('GET /status')).toBe(first + 2);
    await jest.advanceTimersByTimeAsync(2999);
    expect(harness.routes.count('GET /status')).toBe(first + 2);
    await jest.advanceTimersByTimeAsync(1);
    expect(harness.routes.count('GET /status')).toBe(first + 3);
    expect(c.getState().phase).toBe('awaiting_user');
  });
});

describe('VerificationClient: a stream closed for good falls back to polling, before or after its first message', () => {
  const harness = clientHarness();

  it.each([
    ['before', false],
    ['after', true],
  ])(
    '%s its first message: the status is then read by polling, and the page still learns it',
    async (_when, afterFirst) => {
      const c = harness.client({ eventSource: harness.routes.eventSource });
      const sent = answer(harness.routes);
      harness.routes.on('POST /start', { status: 201, body: sent });
      harness.routes.on('GET /status', { status: 200, body: { ...sent, status: 'verified' } });
      await c.start({ phoneNumber: '+79123456789', method: 'sms' });
      const stream = harness.routes.streams.at(-1)!;
      if (afterFirst) stream.push({ ...sent, status: 'delivered' });
      // Closed (readyState 2): the browser will not reconnect by itself.
      stream.fail(2);
      await jest.advanceTimersByTimeAsync(2500);
      expect(harness.routes.count('GET /status')).toBeGreaterThanOrEqual(1);
      expect(c.getState()).toMatchObject({ phase: 'verified' });
    },
  );
});
