import { createConnection, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy between a store and Redis that can misbehave as a network or a Redis in trouble does: refuse
 * connections (accept and close at once, as a Redis restarting), drop those open, swallow what a client sends,
 * hold new connections unanswered until released, or pass each only a while after it arrived. It records when each connection arrived.
 */
export class RedisProxy {
  /** When each connection reached the proxy (Date.now()). */
  readonly arrivals: number[] = [];
  /** New connections are closed at once. */
  refusing = false;
  /** What clients send is dropped, never reaching Redis (nor answered). */
  swallowing = false;
  /** Each connection is passed through this long after it arrived (nothing passed either way meanwhile). */
  passAfterMs = 0;
  private holding = false;
  private readonly held: Socket[] = [];
  private readonly open = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    private readonly target: { host: string; port: number },
  ) {}

  /** A proxy on a free port of 127.0.0.1 to the Redis at `url`. */
  static async start(url: string): Promise<RedisProxy> {
    const { hostname, port } = new URL(url);
    const server = createServer({ pauseOnConnect: true });
    const proxy = new RedisProxy(server, { host: hostname, port: Number(port || 6379) });
    server.on('connection', (socket) => proxy.accepted(socket));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  get url(): string {
    const address = this.server.address() as { port: number };
    return `redis://127.0.0.1:${address.port}`;
  }

  /** Holds each new connection (accepted, nothing passed either way) until `release()`. */
  hold(): void {
    this.holding = true;
  }

  /** Passes the held connections through, and every new one. */
  release(): void {
    this.holding = false;
    for (const socket of this.held.splice(0)) this.pass(socket);
  }

  /** Cuts every open connection, as a network that lost them. */
  drop(): void {
    for (const socket of this.open) socket.destroy();
  }

  async stop(): Promise<void> {
    this.drop();
    for (const socket of this.held.splice(0)) socket.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private accepted(socket: Socket): void {
    this.arrivals.push(Date.now());
    socket.on('error', () => undefined);
    if (this.refusing) return void socket.destroy();
    this.open.add(socket);
    socket.once('close', () => this.open.delete(socket));
    if (this.holding) this.held.push(socket);
    else if (this.passAfterMs > 0) {
      const timer = setTimeout(() => this.pass(socket), this.passAfterMs);
      socket.once('close', () => clearTimeout(timer));
    } else this.pass(socket);
  }

  private pass(client: Socket): void {
    const upstream = createConnection(this.target);
    upstream.on('error', () => undefined);
    const end = (): void => {
      client.destroy();
      upstream.destroy();
    };
    client.once('close', end);
    upstream.once('close', end);
    client.on('data', (chunk) => {
      if (!this.swallowing) upstream.write(chunk);
    });
    upstream.on('data', (chunk) => client.write(chunk));
    client.resume();
  }
}
