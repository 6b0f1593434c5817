/**
 * A local HTTP server that takes no connection until released: what a connect that never completes meets
 * (transport.e2e.part.ts, transport-timers.spec.ts).
 */
import net from 'node:net';
import { Worker } from 'node:worker_threads';

/** What the server behind a slow connect saw: connections (by the client's port), their closes, requests. */
export type GatedEvent =
  | { event: 'listening'; port: number }
  | { event: 'connection' | 'close'; port: number }
  | { event: 'request'; port: number; method: string; url: string };

/**
 * An HTTP server that is slow to take connections: it listens with a backlog of 1 on a worker thread
 * whose event loop then blocks (Atomics.wait) until `release()`, so it accepts nothing. Linux completes
 * backlog + 1 handshakes into the accept queue by itself; `fill()` takes them with idle sockets, and from
 * then on it drops every SYN, so a client's connect stays pending until its SYN is retransmitted (after
 * about 1 s) once the server accepts again. Every event is posted back, in order.
 */
export async function gatedServer(): Promise<{
  port: number;
  events: GatedEvent[];
  fill(): Promise<net.Socket[]>;
  release(): void;
  until(what: string, done: () => boolean): Promise<void>;
  close(): Promise<void>;
}> {
  const gate = new Int32Array(new SharedArrayBuffer(4));
  const worker = new Worker(
    `const { parentPort, workerData } = require('node:worker_threads');
    const http = require('node:http');
    const server = http.createServer((req, res) => {
      parentPort.postMessage({ event: 'request', port: req.socket.remotePort, method: req.method, url: req.url });
      res.writeHead(500, { 'content-length': 0 });
      res.end();
    });
    server.on('connection', (socket) => {
      const port = socket.remotePort;
      parentPort.postMessage({ event: 'connection', port });
      socket.on('close', () => parentPort.postMessage({ event: 'close', port }));
    });
    server.listen({ port: 0, host: '127.0.0.1', backlog: 1 }, () => {
      parentPort.postMessage({ event: 'listening', port: server.address().port });
      Atomics.wait(workerData.gate, 0, 0, 15000);
    });`,
    { eval: true, workerData: { gate } },
  );
  const events: GatedEvent[] = [];
  let changed = (): void => undefined;
  worker.on('message', (message: GatedEvent) => {
    events.push(message);
    changed();
  });
  const release = (): void => {
    Atomics.store(gate, 0, 1);
    Atomics.notify(gate, 0);
  };
  const until = (what: string, done: () => boolean): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      // A bound for a broken setup only: SYNs are retransmitted after 1, 3 and 7 s.
      const timer = setTimeout(() => reject(new Error(`the gated server never saw ${what}`)), 10_000);
      changed = () => {
        if (!done()) return;
        clearTimeout(timer);
        changed = () => undefined;
        resolve();
      };
      changed();
    });
  await until('itself listen', () => events.some((e) => e.event === 'listening'));
  const port = (events.find((e) => e.event === 'listening') as { port: number }).port;
  return {
    port,
    events,
    release,
    until,
    async fill() {
      const sockets: net.Socket[] = [];
      // Linux holds backlog + 1 = 2 connections before any accept. (Were there room for more, the client
      // would connect at once and send the request before its deadline: the test would fail, not pass.)
      for (let i = 0; i < 2; i++) {
        const socket = net.connect(port, '127.0.0.1');
        sockets.push(socket);
        await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
      }
      return sockets;
    },
    async close() {
      release();
      await worker.terminate();
    },
  };
}
