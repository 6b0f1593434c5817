import { createServer, get, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from '@jest/globals';
import { SseResponse } from './sse-response.js';

/*
 * What a client of one Server-Sent Events response receives when the server writes faster than it
 * reads: output the connection has not taken yet is held in memory up to 64 KiB; past that the response
 * is dropped rather than grow (a client that stopped reading), and nothing more is written to it. The
 * writes of one tick are all held (Node sends them on the next), so a burst stands in for a client
 * that stopped reading. Over a real socket: the client sees each event, or the connection end.
 */
describe('SseResponse: output the client has not taken', () => {
  const EVENT_DATA = JSON.stringify({ status: 'sent', padding: 'x'.repeat(1000) });
  let server: Server | undefined;

  afterEach(async () => {
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    server = undefined;
  });

  /** A stream that writes `count` status events in one tick, then ends; what its client receives. */
  async function burst(count: number): Promise<{ events: number; complete: boolean }> {
    server = createServer((_req, res) => {
      const stream = SseResponse.take(res);
      stream.open(2500);
      for (let id = 1; id <= count; id++) stream.event(id, EVENT_DATA);
      stream.end();
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    return new Promise((resolve) => {
      let text = '';
      const seen = (complete: boolean) =>
        resolve({ events: text.split('event: status\n').length - 1, complete });
      const req = get({ port, host: '127.0.0.1', path: '/', agent: false }, (res) => {
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => seen(res.complete));
        res.on('error', () => seen(false));
      });
      req.on('error', () => seen(false));
    });
  }

  it('sends every event and its end while the output held stays within 64 KiB', async () => {
    // About 1 KiB an event: 40 of them hold about 40 KiB.
    expect(await burst(40)).toStrictEqual({ events: 40, complete: true });
  });

  it('drops the response once the output held passes 64 KiB: the client never gets the stream’s end', async () => {
    // 200 events hold about 200 KiB: the response is dropped at the first write past 64 KiB.
    const received = await burst(200);
    expect(received.complete).toBe(false);
    expect(received.events).toBeLessThan(200);
  });
});

/*
 * The connection's state as Node reports it, at each bound: a response the client left (destroyed, its
 * socket destroyed) or that ended takes no more writes; the backlog bound is 64 KiB exactly.
 */
describe('SseResponse: a connection at its bounds', () => {
  /** A Node response as SseResponse reads it: what was written, whether it was ended or destroyed. */
  function connection(
    state: {
      writableLength?: number;
      destroyed?: boolean;
      writableEnded?: boolean;
      socketDestroyed?: boolean;
    } = {},
  ) {
    const seen = { written: [] as string[], ended: 0, destroyed: 0, close: [] as (() => void)[] };
    const raw = {
      writableLength: state.writableLength ?? 0,
      destroyed: state.destroyed ?? false,
      writableEnded: state.writableEnded ?? false,
      socket: state.socketDestroyed === undefined ? null : { destroyed: state.socketDestroyed },
      write: (chunk: string) => void seen.written.push(chunk),
      end: () => void (seen.ended += 1),
      destroy: () => void (seen.destroyed += 1),
      on: (_event: string, listener: () => void) => void seen.close.push(listener),
    };
    return { stream: SseResponse.take(raw), seen, raw };
  }

  it('takes a write with exactly 64 KiB held, and drops the connection past it', () => {
    const at = connection({ writableLength: 64 * 1024 });
    at.stream.ping();
    expect([at.seen.written, at.seen.destroyed]).toStrictEqual([[': ping\n\n'], 0]);
    const past = connection({ writableLength: 64 * 1024 + 1 });
    past.stream.ping();
    expect([past.seen.written, past.seen.destroyed]).toStrictEqual([[], 1]);
  });

  it.each([
    ['destroyed', { destroyed: true }],
    ['ended', { writableEnded: true }],
    ['whose socket is destroyed', { socketDestroyed: true }],
  ])('a connection %s takes no write and is not ended again', (_name, state) => {
    const { stream, seen } = connection(state);
    stream.event(1, '{}');
    stream.end();
    expect([seen.written, seen.ended, stream.closed]).toStrictEqual([[], 0, true]);
  });

  it('a live connection (its socket too) takes writes and its end', () => {
    const { stream, seen } = connection({ socketDestroyed: false });
    stream.event(1, '{}');
    stream.end();
    expect([seen.written, seen.ended, stream.closed]).toStrictEqual([
      ['event: status\nid: 1\ndata: {}\n\n'],
      1,
      false,
    ]);
  });

  it('once the client has gone, the connection is dropped if the server had not ended it, and the listener told', () => {
    const left = connection();
    let told = 0;
    left.stream.onClose(() => (told += 1));
    left.seen.close.forEach((listener) => listener());
    expect([left.seen.destroyed, told]).toStrictEqual([1, 1]);
    const ended = connection({ writableEnded: true });
    ended.stream.onClose(() => (told += 1));
    ended.seen.close.forEach((listener) => listener());
    expect([ended.seen.destroyed, told]).toStrictEqual([0, 2]);
  });
});
