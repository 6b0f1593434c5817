/**
 * The element's wiring of the browser client, without a browser: its two ways of reading the routes
 * (fetch for the calls, the status stream for the status) carry the same credentials, and the methods
 * it offers when `GET /methods` cannot be read are real method names.
 */
import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import type { VerificationClient } from '../../src/client/index.js';
import { elementClient, hostFetch, offeredMethods } from '../../src/element/element-client.js';
import { answer, FakeEventSource, FakeRoutes, MemoryStorage } from '../client/fake-routes.js';

/** EventSource as the browser has it: the constructor takes `{ withCredentials }`. */
class RecordingEventSource extends FakeEventSource {
  static made: RecordingEventSource[] = [];
  constructor(
    url: string,
    readonly init?: { withCredentials?: boolean },
  ) {
    super(url);
    RecordingEventSource.made.push(this);
  }
}

const hostWith = (attributes: Record<string, string>): HTMLElement =>
  ({ getAttribute: (name: string) => attributes[name] ?? null }) as unknown as HTMLElement;

const globals = globalThis as unknown as { EventSource?: unknown; fetch: typeof fetch };

describe("the element's requests and its status stream carry the same credentials", () => {
  let routes: FakeRoutes;
  let made: VerificationClient[];
  const realFetch = globals.fetch;
  const realEventSource = globals.EventSource;
  beforeEach(() => {
    jest.useFakeTimers({ now: Date.parse('2026-11-23T12:00:00Z') });
    routes = new FakeRoutes();
    made = [];
    RecordingEventSource.made = [];
    globals.EventSource = RecordingEventSource;
  });
  afterEach(() => {
    for (const c of made) c.dispose();
    globals.EventSource = realEventSource;
    globals.fetch = realFetch;
    jest.useRealTimers();
  });

  it.each([
    ['include', 'include', true],
    ['same-origin (no attribute)', undefined, false],
  ])('credentials=%s', async (_name, mode, withCredentials) => {
    const host = hostWith(mode === undefined ? {} : { credentials: mode });
    // The calls: hostFetch over the page's fetch.
    const sent: RequestInit[] = [];
    globals.fetch = (async (_url: string, init: RequestInit) => {
      sent.push(init);
      return new Response('{}', { status: 200, headers: { 'content-type': 'application/json' } });
    }) as typeof fetch;
    await hostFetch(host, () => undefined)('/verification/methods', {
      method: 'GET',
      headers: {},
      credentials: 'same-origin',
      signal: new AbortController().signal,
    } as never);
    expect(sent[0]!.credentials === 'include').toBe(withCredentials);

    // The status: the stream the element's client opens after a start.
    const sms = answer(routes);
    routes.on('POST /start', { status: 201, body: sms });
    routes.on('GET /status', { status: 200, body: sms });
    const c = elementClient(host, '/verification', routes.fetch, {
      storage: new MemoryStorage(),
      random: () => 0,
      webOtp: false,
    });
    made.push(c);
    await c.start({ phoneNumber: '+79123456789', method: 'sms' });
    await jest.advanceTimersByTimeAsync(0);
    expect(RecordingEventSource.made).toHaveLength(1);
    expect(RecordingEventSource.made[0]!.url).toBe('/verification/status/VID-1/events');
    expect(RecordingEventSource.made[0]!.init?.withCredentials === true).toBe(withCredentials);
  });
});

describe('the methods the element offers', () => {
  const methodsAnswer = (methods: string[]) =>
    (async () =>
      new Response(JSON.stringify({ methods: methods.map((method) => ({ method })) }), {
        status: 200,
      })) as never;
  const unreachable = (async () => {
    throw new TypeError('Failed to fetch');
  }) as never;

  it('as the server says, `all` standing for each of its methods', async () => {
    await expect(
      offeredMethods(methodsAnswer(['sms', 'flash_call']), '/verification', ['all']),
    ).resolves.toEqual({ offered: ['sms', 'flash_call'] });
    await expect(
      offeredMethods(methodsAnswer(['sms']), '/verification', ['auto', 'sms', 'flash_call']),
    ).resolves.toEqual({ offered: ['auto', 'sms'] });
  });

  it('when the server cannot say: the names given, never `all` (which is no method)', async () => {
    for (const wanted of [['all'], ['all', 'sms'], ['sms', 'all', 'flash_call']])
      expect((await offeredMethods(unreachable, '/verification', wanted)).offered).toEqual(
        wanted.filter((m) => m !== 'all'),
      );
  });
});

describe('credentials="header": the host’s headers on every call, the status read with fetch', () => {
  const realFetch = globals.fetch;
  const realEventSource = globals.EventSource;
  afterEach(() => {
    globals.fetch = realFetch;
    globals.EventSource = realEventSource;
    jest.useRealTimers();
  });
  const init = {
    method: 'GET',
    headers: { accept: 'application/json' },
    credentials: 'same-origin',
  } as never;

  it.each([
    ['an object', { authorization: 'Bearer A' }],
    ['a function', () => ({ authorization: 'Bearer A' })],
    ['an async function', async () => ({ authorization: 'Bearer A' })],
  ])(
    'given as %s: sent with no cookies; without the attribute, neither sent nor cookies changed',
    async (_shape, given) => {
      const sent: RequestInit[] = [];
      globals.fetch = (async (_url: string, request: RequestInit) => {
        sent.push(request);
        return new Response('{}', { status: 200 });
      }) as typeof fetch;
      await hostFetch(hostWith({ credentials: 'header' }), () => given)('/verification/methods', init);
      await hostFetch(hostWith({}), () => given)('/verification/methods', init);
      await hostFetch(hostWith({ credentials: 'include' }), () => given)('/verification/methods', init);
      expect(sent.map((r) => [r.credentials, r.headers])).toEqual([
        ['omit', { accept: 'application/json', authorization: 'Bearer A' }],
        ['same-origin', { accept: 'application/json' }],
        ['include', { accept: 'application/json' }],
      ]);
    },
  );

  it('no headers given: the call goes with none added', async () => {
    const sent: RequestInit[] = [];
    globals.fetch = (async (_url: string, request: RequestInit) => {
      sent.push(request);
      return new Response('{}', { status: 200 });
    }) as typeof fetch;
    await hostFetch(hostWith({ credentials: 'header' }), () => undefined)('/verification/methods', init);
    expect(sent[0]!.headers).toEqual({ accept: 'application/json' });
  });

  it.each<[string, Record<string, string>, boolean]>([
    ['credentials="header"', { credentials: 'header' }, true],
    ['no EventSource in the browser', {}, false],
  ])('%s: no EventSource; the status is read by fetch', async (_name, attributes, streamed) => {
    jest.useFakeTimers({ now: Date.parse('2026-11-23T12:00:00Z') });
    globals.EventSource = attributes.credentials ? RecordingEventSource : undefined;
    RecordingEventSource.made = [];
    const routes = new FakeRoutes();
    const sms = answer(routes);
    routes.on('POST /start', { status: 201, body: sms });
    routes.on('GET /status', { status: 200, body: { ...sms, status: 'verified' } });
    const urls: string[] = [];
    const c = elementClient(
      hostWith(attributes),
      '/verification',
      (url, request) => {
        urls.push(url);
        return routes.fetch(url, request);
      },
      { storage: new MemoryStorage(), random: () => 0, webOtp: false },
    );
    try {
      await c.start({ phoneNumber: '+79123456789', method: 'sms' });
      await jest.advanceTimersByTimeAsync(2500);
      expect(RecordingEventSource.made).toHaveLength(0);
      expect(urls.some((u) => u.endsWith('/events'))).toBe(streamed);
      if (!streamed) expect(c.getState().phase).toBe('verified');
    } finally {
      c.dispose();
    }
  });
});

describe('how the element asks for the methods', () => {
  it('GET <base-url>/methods as JSON, never cached; each wanted method the server offers is kept', async () => {
    const asked: [string, unknown][] = [];
    const send = (async (url: string, request: unknown) => {
      asked.push([url, request]);
      return new Response(
        JSON.stringify({ methods: [{ method: 'sms' }, { method: 'flash_call' }], default_country: 'KZ' }),
        { status: 200 },
      );
    }) as never;
    await expect(offeredMethods(send, '/api/verify', ['flash_call', 'voice', 'sms'])).resolves.toEqual({
      offered: ['flash_call', 'sms'],
      country: 'KZ',
    });
    expect(asked).toEqual([
      [
        '/api/verify/methods',
        expect.objectContaining({
          method: 'GET',
          headers: { accept: 'application/json' },
          cache: 'no-store',
        }),
      ],
    ]);
    // fetch's default credentials (same-origin): the element's `credentials` attribute alone sets another.
    expect((asked[0] as unknown as [string, { credentials?: string }])[1].credentials).toBeUndefined();
  });
});

describe("the host's clientOptions win over the element's defaults", () => {
  const realEventSource = globals.EventSource;
  afterEach(() => {
    globals.EventSource = realEventSource;
    jest.useRealTimers();
  });

  it.each<[string, ((url: string) => FakeEventSource) | null, number, boolean]>([
    // The element would open `new EventSource(url, { withCredentials: false })`: the host's own is used.
    ['its own EventSource', (url) => new RecordingEventSource(url, { withCredentials: true }), 1, true],
    // The element would open one (the browser has EventSource): the host said none, so the status is polled.
    ['no EventSource (null)', null, 0, false],
  ])('%s', async (_name, eventSource, opened, streamed) => {
    jest.useFakeTimers({ now: Date.parse('2026-11-23T12:00:00Z') });
    globals.EventSource = RecordingEventSource;
    RecordingEventSource.made = [];
    const routes = new FakeRoutes();
    const sms = answer(routes);
    routes.on('POST /start', { status: 201, body: sms });
    routes.on('GET /status', { status: 200, body: { ...sms, status: 'verified' } });
    const c = elementClient(hostWith({}), '/verification', routes.fetch, {
      storage: new MemoryStorage(),
      random: () => 0,
      webOtp: false,
      eventSource: eventSource as never,
    });
    try {
      await c.start({ phoneNumber: '+79123456789', method: 'sms' });
      await jest.advanceTimersByTimeAsync(2500);
      expect(RecordingEventSource.made.map((s) => s.init?.withCredentials)).toEqual(opened ? [true] : []);
      // Polled: the status route's answer reached the client without any stream.
      if (!streamed) expect(c.getState().phase).toBe('verified');
    } finally {
      c.dispose();
    }
  });
});
