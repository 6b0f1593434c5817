import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { fetchEventSource } from '../../src/client/fetch-event-source.js';
import type {
  EventSourceLike,
  FetchLike,
  RequestInitLike,
  ResponseLike,
} from '../../src/client/transport.js';

/**
 * A response whose body is `chunks` (text, or bytes as the network splits them), each read in turn; the
 * body ends after the last one, or stays open (`open`: the next read never answers, as a live stream).
 */
function streamed(chunks: (string | Uint8Array)[], status = 200, open = false): ResponseLike {
  const encoder = new TextEncoder();
  let i = 0;
  return {
    ok: status < 300,
    status,
    headers: { get: () => null },
    json: () => Promise.resolve({}),
    body: {
      getReader: () => ({
        read: () => {
          if (i >= chunks.length)
            return open ? new Promise<never>(() => undefined) : Promise.resolve({ done: true });
          const chunk = chunks[i++]!;
          return Promise.resolve({
            done: false,
            value: typeof chunk === 'string' ? encoder.encode(chunk) : chunk,
          });
        },
      }),
    },
  };
}

/** What a listener of `types` and of `error` sees of a stream: each message, and readyState at each error. */
function watch(source: EventSourceLike, types = ['message', 'status']) {
  const seen: [string, unknown][] = [];
  const errors: number[] = [];
  for (const type of types) source.addEventListener(type, (event) => seen.push([type, event.data]));
  source.addEventListener('error', () => errors.push(source.readyState));
  return { seen, errors };
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
    expect(requests[0]!.headers).toStrictEqual({ authorization: 'Bearer t-1', accept: 'text/event-stream' });
    // A GET (the route's method); the page's cookies go to its own origin only, as EventSource's default;
    // nothing is cached. No Last-Event-ID before the server named an id.
    expect(requests[0]).toMatchObject({ method: 'GET', credentials: 'same-origin', cache: 'no-store' });
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

  /** Answers with a real fetch Response: `type` its Content-Type, its body one message, then the end. */
  const typed =
    (type: string): FetchLike =>
    () =>
      Promise.resolve(
        new Response('event: status\ndata: {"status":"sent"}\n\n', {
          headers: { 'content-type': type },
        }) as ResponseLike,
      );

  it.each([
    'text/event-stream',
    'text/event-stream; charset=utf-8',
    'text/event-stream;charset=utf-8',
    'text/event-stream ;charset=utf-8',
    'Text/Event-Stream',
  ])('Content-Type %j is the stream: its messages are read, its end reconnects', async (type) => {
    const source = fetchEventSource(typed(type), () => ({}))('/v/status/ID/events');
    const { seen, errors } = watch(source);
    await jest.advanceTimersByTimeAsync(0);
    expect([seen, errors]).toEqual([[['status', '{"status":"sent"}']], [0]]);
    source.close();
  });

  it.each([
    'text/html; charset=utf-8',
    'text/plain',
    'text/event-streaming',
    'text/event-stream-x',
    'application/x-text/event-stream',
  ])(
    "Content-Type %j is not the stream (a single-page app's catch-all, a proxy's page): an error with CLOSED, nothing read, not asked again",
    async (type) => {
      let calls = 0;
      const fetchImpl = typed(type);
      const source = fetchEventSource(
        (url, init) => (calls++, fetchImpl(url, init)),
        () => ({}),
      )('/v/status/ID/events');
      const { seen, errors } = watch(source);
      await jest.advanceTimersByTimeAsync(60_000);
      expect([seen, errors, calls]).toEqual([[], [2], 1]);
    },
  );

  it('a request that fails (no network, a blocked origin) is an error with CLOSED: the follower polls, the stream is not asked again', async () => {
    let calls = 0;
    const source = fetchEventSource(
      () => (calls++, Promise.reject(new TypeError('Failed to fetch'))),
      () => ({}),
    )('/v/status/ID/events');
    const { errors } = watch(source);
    await jest.advanceTimersByTimeAsync(60_000);
    expect([errors, calls, source.readyState]).toEqual([[2], 1, 2]);
  });

  it('closed while its request is under way (the fetch aborted): no error at all', async () => {
    const source = fetchEventSource(
      (_url, init) =>
        new Promise((_resolve, reject) =>
          init.signal.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError'))),
        ),
      () => ({}),
    )('/v/status/ID/events');
    const { errors } = watch(source);
    source.close();
    await jest.advanceTimersByTimeAsync(10_000);
    expect([errors, source.readyState]).toEqual([[], 2]);
  });

  it('a listener that closes on a message gets nothing more from that stream: no message, no error, no reconnection', async () => {
    let calls = 0;
    const source = fetchEventSource(
      // A fetch whose body does not stop on abort: what it already holds is read all the same.
      () => (calls++, Promise.resolve(streamed(['data: 1\n\n', 'data: 2\n\n']))),
      () => ({}),
    )('/v/status/ID/events');
    const { seen, errors } = watch(source);
    source.addEventListener('message', () => source.close());
    await jest.advanceTimersByTimeAsync(60_000);
    expect([seen, errors, calls, source.readyState]).toEqual([[['message', '1']], [], 1, 2]);
  });

  it('closed while it waits to reconnect: not asked again', async () => {
    let calls = 0;
    const source = fetchEventSource(
      () => (calls++, Promise.resolve(streamed(['data: 1\n\n']))),
      () => ({}),
    )('/v/status/ID/events');
    const { errors } = watch(source);
    await jest.advanceTimersByTimeAsync(1000);
    expect([errors, calls]).toEqual([[0], 1]);
    source.close();
    await jest.advanceTimersByTimeAsync(60_000);
    expect([calls, source.readyState]).toEqual([1, 2]);
  });

  it("a message without an event name is a 'message', the stream's first one too", async () => {
    const source = fetchEventSource(
      () => Promise.resolve(streamed(['data: first\n\nevent: status\ndata: 2\n\ndata: third\n\n'])),
      () => ({}),
    )('/v/status/ID/events');
    const { seen } = watch(source);
    await jest.advanceTimersByTimeAsync(0);
    expect(seen).toEqual([
      ['message', 'first'],
      ['status', '2'],
      ['message', 'third'],
    ]);
    source.close();
  });

  it('a character whose UTF-8 bytes the network splits between two chunks is read whole', async () => {
    const bytes = new TextEncoder().encode('data: Zoë → ok\n\n');
    const cut = bytes.indexOf(0xc3) + 1; // inside ë
    const source = fetchEventSource(
      () => Promise.resolve(streamed([bytes.slice(0, cut), bytes.slice(cut)])),
      () => ({}),
    )('/v/status/ID/events');
    const { seen } = watch(source);
    await jest.advanceTimersByTimeAsync(0);
    expect(seen).toEqual([['message', 'Zoë → ok']]);
    source.close();
  });

  it('lines ended by CR alone are read while the stream stays open (only a CR that ends a chunk waits)', async () => {
    const source = fetchEventSource(
      () => Promise.resolve(streamed(['event: status\rdata: {"status":"sent"}\r\r: ping\r'], 200, true)),
      () => ({}),
    )('/v/status/ID/events');
    const { seen } = watch(source);
    await jest.advanceTimersByTimeAsync(0);
    expect(seen).toEqual([['status', '{"status":"sent"}']]);
    source.close();
  });

  it("a field's value loses one leading space only; a line without a colon is a field with an empty value", async () => {
    const source = fetchEventSource(
      () => Promise.resolve(streamed(['data\n\ndata:a b\n\ndata:  two\n\nevent: status\ndata\ndata\n\n'])),
      () => ({}),
    )('/v/status/ID/events');
    const { seen } = watch(source);
    await jest.advanceTimersByTimeAsync(0);
    expect(seen).toStrictEqual([
      ['message', ''],
      ['message', 'a b'],
      ['message', ' two'],
      ['status', '\n'],
    ]);
    source.close();
  });

  it("a field it does not know is ignored, a number in it too: the reconnection waits retry's default", async () => {
    let calls = 0;
    const source = fetchEventSource(
      () => (calls++, Promise.resolve(streamed(['delay: 1000\nwait: 2000\ndata: x\n\n']))),
      () => ({}),
    )('/v/status/ID/events');
    await jest.advanceTimersByTimeAsync(2999);
    expect(calls).toBe(1);
    await jest.advanceTimersByTimeAsync(1);
    expect(calls).toBe(2);
    source.close();
  });
});
