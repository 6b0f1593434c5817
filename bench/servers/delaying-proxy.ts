/**
 * The store-latency row's distance: a TCP proxy to `target` that holds every chunk `delayMs` in each
 * direction (order kept). A process of its own, so that its timers do not wait for the host's work.
 */
import net from 'node:net';
import { forkArgument, serveCommands } from '../lib/child-process.js';

export interface DelayingProxyArgs {
  target: string;
  delayMs: number;
}

const { target, delayMs } = forkArgument<DelayingProxyArgs>();
const to = new URL(target);
const sockets = new Set<net.Socket>();
const server = net.createServer((client) => {
  const upstream = net.connect(Number(to.port || 6379), to.hostname);
  for (const s of [client, upstream]) {
    sockets.add(s);
    s.setNoDelay(true);
    s.on('error', () => undefined);
    s.on('close', () => {
      client.destroy();
      upstream.destroy();
    });
  }
  client.on('data', (chunk) => setTimeout(() => upstream.write(chunk), delayMs));
  upstream.on('data', (chunk) => setTimeout(() => client.write(chunk), delayMs));
});

await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const { port } = server.address() as net.AddressInfo;
serveCommands({ url: `redis://127.0.0.1:${port}` }, {}, () => {
  for (const s of sockets) s.destroy();
  server.close();
});
