import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { fetchEventSource } from '../../src/client/fetch-event-source.js';
import type { FetchLike, RequestInitLike, ResponseLike } from '../../src/client/transport.js';

/** A response whose body is `chunks`, each read in turn; the body ends after the last one. */
function streamed(chunks: string[], status = 200): ResponseLike {
  const encoder = new TextEncoder();
  let i = 0;
  return {
    ok: status < 300,
    status,
    headers: { get: () => null },
    json: () => Promise.resolve({}),
    body: {
      getReader: () => ({
        read: () =>
          Promise.resolve(
            i < chunks.length ? { done: false, value: encoder.encode(chunks[i++]) } : { done: true },
          ),
      }),
    },
  };
}

/** The status stream read with fetch: the host's headers sent, messages parsed, EventSource's close and reconnect. */
describe('fetchEventSource', () => {
  beforeEach(() => {
    jest.useFakeTimers();
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  it('sends the headers, parses messages split anywhere, and reconnects with Last-Event-ID when the server ends the stream', async () => {
    const requests: RequestInitLike[] = [];
    const answers = [
      streamed([
        'retry: 2500\n\nevent: status\nid: 1\nda',
        'ta: {"status":"sent"}\n\n: ping\n\nevent: status\n',
      ]),
      streamed(['event: status\nid: 2\ndata: {"status":\ndata: "verified"}\n\n']),
    ];
    const fetchImpl: FetchLike = (_url, init) => {
      requests.push(init);
      return Promise.resolve(answers.shift() ?? streamed([], 404));
    };
    const source = fetchEventSource(fetchImpl, () => ({ authorization: 'Bearer t-1' }))(
      '/v/status/ID/events',
    );
    const data: unknown[] = [];
    const errors: number[] = [];
    source.addEventListener('status', (event) => data.push(event.data));
    source.addEventListener('error', () => errors.push(source.readyState));
    await jest.advanceTimersByTimeAsync(0);
    expect(data).toEqual(['{"status":"sent"}']);
    expect(requests[0]!.headers).toMatchObject({ authorization: 'Bearer t-1', accept: 'text/event-stream' });
    // The page's cookies go to its own origin only, as EventSource's default; nothing is cached.
    expect(requests[0]).toMatchObject({ credentials: 'same-origin', cache: 'no-store' });
    expect(source.readyState).toBe(0); // ended: reconnecting after `retry`
    await jest.advanceTimersByTimeAsync(2500);
    expect(requests[1]!.headers).toMatchObject({ authorization: 'Bearer t-1', 'last-event-id': '1' });
    // A message whose data spans lines is joined by newlines, as EventSource does.
    expect(data).toEqual(['{"status":"sent"}', '{"status":\n"verified"}']);
    // Each end was an error while CONNECTING; the third connection is refused (404): closed for good.
    await jest.advanceTimersByTimeAsync(2500);
    expect(errors).toEqual([0, 0, 2]);
    expect(requests).toHaveLength(3);
    await jest.advanceTimersByTimeAsync(60_000);
    expect(requests).toHaveLength(3);
  });

  it('a block without data dispatches nothing (an event name alone, a comment, an id), as EventSource does', async () => {
    const source = fetchEventSource(
      () =>
        Promise.resolve(
          streamed(['event: status\n\n: ping\n\nid: 7\n\n\n', 'data: x\n\nevent: status\ndata: y\n\n']),
        ),
      () => ({}),
    )('/v/status/ID/events');
    const seen: [string, unknown][] = [];
    for (const type of ['status', 'message'])
      source.addEventListener(type, (event) => seen.push([type, event.data]));
    await jest.advanceTimersByTimeAsync(0);
    expect(seen).toEqual([
      ['message', 'x'],
      ['status', 'y'],
    ]);
  });

  it('reads lines ended by CRLF or CR as by LF (the stream format allows all three; a proxy may rewrite them)', async () => {
    const source = fetchEventSource(
      () =>
        Promise.resolve(
          streamed(['event: status\r\ndata: {"a":\r', '\ndata: 1}\r\n\r\nevent: status\rdata: {"b":2}\r\r']),
        ),
      () => ({}),
    )('/v/status/ID/events');
    const data: unknown[] = [];
    source.addEventListener('status', (event) => data.push(event.data));
    await jest.advanceTimersByTimeAsync(0);
    // A CRLF split between two chunks is one line end, not two (a blank line would end the message early).
    expect(data).toStrictEqual(['{"a":\n1}', '{"b":2}']);
    source.close();
  });

  it('an open stream ended is an error while CONNECTING; a listener that closes then stops the reconnection', async () => {
    let calls = 0;
    const source = fetchEventSource(
      () => (calls++, Promise.resolve(streamed([]))),
      () => ({}),
    )('/v/status/ID/events');
    const states: number[] = [];
    source.addEventListener('error', () => {
      states.push(source.readyState);
      if (states.length === 2) source.close();
    });
    await jest.advanceTimersByTimeAsync(0);
    expect([states, calls]).toEqual([[0], 1]);
    await jest.advanceTimersByTimeAsync(2999);
    expect(calls).toBe(1);
    await jest.advanceTimersByTimeAsync(1);
    expect([states, calls]).toEqual([[0, 0], 2]);
    await jest.advanceTimersByTimeAsync(60_000);
    expect([calls, source.readyState]).toEqual([2, 2]);
  });

  it('a refused stream (401) is an error with readyState CLOSED at once; close() stops everything', async () => {
    const fetchImpl: FetchLike = () => Promise.resolve(streamed([], 401));
    const refused = fetchEventSource(fetchImpl, () => ({}))('/v/status/ID/events');
    const states: number[] = [];
    refused.addEventListener('error', () => states.push(refused.readyState));
    await jest.advanceTimersByTimeAsync(0);
    expect(states).toEqual([2]);

    let calls = 0;
    const closing = fetchEventSource(
      () => (calls++, Promise.resolve(streamed(['event: status\ndata: {}\n\n']))),
      () => ({}),
    )('/v/status/ID/events');
    closing.close();
    await jest.advanceTimersByTimeAsync(10_000);
    expect(calls).toBe(1);
    expect(closing.readyState).toBe(2);
  });

  it('a retry that is not a whole number of ms is ignored: the stream is not asked for again at once', async () => {
    let calls = 0;
    const fetchImpl: FetchLike = () => {
      calls += 1;
      return Promise.resolve(streamed(['retry: soon\nretry: -1\nretry: 1e3\n\n']));
    };
    const source = fetchEventSource(fetchImpl, () => ({}))('/v/status/ID/events');
    await jest.advanceTimersByTimeAsync(2999);
    expect(calls).toBe(1);
    await jest.advanceTimersByTimeAsync(1);
    expect(calls).toBe(2);
    source.close();
  });
});
