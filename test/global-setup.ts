/**
 * Jest's global setup and teardown: the suites run against a real Redis, `REDIS_URL` when set,
 * otherwise a throwaway `redis-server` started here. Jest's workers inherit the parent's
 * environment, so exporting `REDIS_URL` is how they find it. Missing Redis fails the run with
 * how to install it.
 *
 * The throwaway server lives in this file, not in test/support, because jest loads global setup
 * through Node's own ESM resolver, which cannot follow a `.js` import to a `.ts` source; the
 * suites import it through test/support/redis-server.ts.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { connect, createServer } from 'node:net';

export const REDIS_REQUIRED_MESSAGE =
  'Redis is required for the test suite: install it (Debian: apt-get install redis-server) or set REDIS_URL';

/** A port nobody listens on right now (the OS picks it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** True when something on the port answers a PING with a RESP reply. */
function answersPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    const finish = (answered: boolean): void => {
      socket.destroy();
      resolve(answered);
    };
    socket.setTimeout(500, () => finish(false));
    socket.once('error', () => finish(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => finish(/^[+-]/.test(data.toString())));
  });
}

export interface RedisServerOptions {
  /** Default: a free port. */
  port?: number;
  /** Sets `requirepass`; the URL then carries it. */
  password?: string;
  /** More `redis-server` arguments, given the port (cluster mode: `--cluster-enabled yes`, …). */
  args?: (port: number) => string[];
}

class PortTakenError extends Error {
  constructor(port: number) {
    super(`redis-server exited at start (is port ${port} taken?)`);
  }
}

/**
 * A throwaway `redis-server` (no persistence, loopback only) that a test can stop and start
 * again on the same port, to play Redis going away and coming back.
 */
export class ThrowawayRedisServer {
  private process: ChildProcess | undefined;
  private readonly onParentExit = (): void => {
    this.process?.kill('SIGKILL');
  };

  private constructor(
    readonly port: number,
    private readonly password: string | undefined,
    private readonly extraArgs: string[] = [],
  ) {}

  static async start(options: RedisServerOptions = {}): Promise<ThrowawayRedisServer> {
    if (options.port !== undefined) {
      const server = new ThrowawayRedisServer(options.port, options.password, options.args?.(options.port));
      await server.start();
      return server;
    }
    // Another process may take the free port before redis-server binds it: try a few ports.
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      const server = new ThrowawayRedisServer(port, options.password, options.args?.(port));
      try {
        await server.start();
        return server;
      } catch (error) {
        if (!(error instanceof PortTakenError) || attempt === 3) throw error;
      }
    }
  }

  get url(): string {
    const auth = this.password === undefined ? '' : `:${encodeURIComponent(this.password)}@`;
    return `redis://${auth}127.0.0.1:${this.port}`;
  }

  get running(): boolean {
    return this.process !== undefined;
  }

  /** Starts the server (again) and resolves once it answers. */
  async start(): Promise<void> {
    if (this.process) return;
    const args = ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
    if (this.password !== undefined) args.push('--requirepass', this.password);
    args.push(...this.extraArgs);
    const child = spawn('redis-server', args, { stdio: 'ignore' });
    const spawned = new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', (error: NodeJS.ErrnoException) =>
        reject(error.code === 'ENOENT' ? new Error(REDIS_REQUIRED_MESSAGE) : error),
      );
    });
    await spawned;
    this.process = child;
    // A crashed or interrupted run must not leave the server behind.
    process.once('exit', this.onParentExit);
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const deadline = Date.now() + 10_000;
    while (!(await answersPing(this.port))) {
      const gone = await Promise.race([exited.then(() => true), pause(50).then(() => false)]);
      if (gone) {
        this.process = undefined;
        throw new PortTakenError(this.port);
      }
      if (Date.now() > deadline) {
        await this.stop();
        throw new Error(`redis-server did not answer on port ${this.port} within 10 s`);
      }
    }
  }

  /** Freezes the server (SIGSTOP): connections stay open and nothing answers, like a hung Redis. */
  freeze(): void {
    this.process?.kill('SIGSTOP');
  }

  /** Lets a frozen server run again (SIGCONT). */
  thaw(): void {
    this.process?.kill('SIGCONT');
  }

  /** Kills the server (like a crash) and resolves once it has exited. */
  async stop(): Promise<void> {
    const child = this.process;
    if (!child) return;
    this.process = undefined;
    process.removeListener('exit', this.onParentExit);
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGKILL');
    await exited;
  }
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Jest loads global setup and teardown as separate modules; the parent's globalThis is the
 * one place both see, so the shared server is kept there.
 */
const SHARED_SERVER_SLOT = Symbol.for('nestjs-phone-verification.test.sharedRedisServer');

/** Debian's Chromium (`apt-get install chromium`): the browser tests use it when it is installed. */
export const DEBIAN_CHROMIUM = '/usr/bin/chromium';

/**
 * The Chromium the browser tests drive: Debian's when installed, else the one packed in the
 * @sparticuz/chromium devDependency, so that `npm install && npm test` needs no system package.
 * `PV_TEST_CHROMIUM=bundled` takes the packed one even where Debian's is installed.
 */
export async function chromiumExecutable(): Promise<string> {
  if (process.env.PV_TEST_CHROMIUM_PATH) return process.env.PV_TEST_CHROMIUM_PATH;
  if (process.env.PV_TEST_CHROMIUM !== 'bundled' && existsSync(DEBIAN_CHROMIUM)) return DEBIAN_CHROMIUM;
  const { default: packed } = await import('@sparticuz/chromium');
  return packed.executablePath();
}

export default async function globalSetup(): Promise<void> {
  // Resolved once, before the workers start: the packed browser's first use unpacks it into the
  // temporary folder (a few seconds), which two workers doing at once would race on. A failure here
  // is left to the browser tests, which try again and report it.
  try {
    process.env.PV_TEST_CHROMIUM_PATH = await chromiumExecutable();
  } catch {
    delete process.env.PV_TEST_CHROMIUM_PATH;
  }
  if (process.env.REDIS_URL) return;
  const server = await ThrowawayRedisServer.start();
  (globalThis as Record<symbol, unknown>)[SHARED_SERVER_SLOT] = server;
  process.env.REDIS_URL = server.url;
}
