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
