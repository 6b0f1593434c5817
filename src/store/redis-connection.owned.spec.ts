/**
 * A RedisStore that opened its own client from a URL, over stand-ins of both libraries (ioredis, and
 * node-redis of v5 and of v4's shape): which library it opens, and how close() ends the connection it owns
 * (gracefully when ready, dropped when not or when the graceful end hangs past the deadline, on jest's clock).
 * The libraries are replaced by jest's module mocks, so this spec has its modules to itself: no merged file
 * imports it. A host's own client: redis-connection.spec.
 */
import { EventEmitter } from 'node:events';
import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';

/** What each client the store opened was asked to do, in order. */
const log: string[] = [];
const opened: { ioredis: IoRedisStandIn[]; redis: NodeRedisStandIn[] } = { ioredis: [], redis: [] };

/** Set: every command fails with this text (a library's error may quote its connection's password). */
let refusal: string | undefined;

/** How a graceful end answers: at once, never, or with a failure. */
let ending: 'answered' | 'hung' | 'failed' = 'answered';
const end = (name: string): Promise<unknown> => {
  log.push(name);
  if (ending === 'hung') return new Promise(() => undefined);
  return ending === 'failed' ? Promise.reject(new Error('Connection is closed.')) : Promise.resolve('OK');
};

class IoRedisStandIn extends EventEmitter {
  status = 'connecting';
  constructor() {
    super();
    opened.ioredis.push(this);
  }
  call(command: string): Promise<unknown> {
    log.push(command);
    return refusal === undefined ? Promise.resolve(0) : Promise.reject(new Error(refusal));
  }
  quit(): Promise<unknown> {
    return end('QUIT');
  }
  disconnect(): void {
    log.push('disconnect');
    this.status = 'end';
  }
  up(): void {
    this.status = 'ready';
    this.emit('ready');
  }
}

/** node-redis: v5's close() and destroy(), or v4's quit() and disconnect() (which throws once it is closed). */
let v4 = false;

class NodeRedisStandIn extends EventEmitter {
  isOpen = false;
  isReady = false;
  constructor() {
    super();
    opened.redis.push(this);
    if (v4) {
      Object.assign(this, {
        quit: () =>
          end('quit').then((answer) => {
            this.isOpen = this.isReady = false;
            return answer;
          }),
        disconnect: () => {
          log.push('disconnect');
          if (!this.isOpen) throw new Error('The client is closed');
          this.isOpen = this.isReady = false;
          return Promise.resolve();
        },
      });
    } else {
      Object.assign(this, {
        close: () => end('close'),
        destroy: () => {
          log.push('destroy');
          this.isOpen = this.isReady = false;
        },
      });
    }
  }
  connect(): Promise<unknown> {
    this.isOpen = true;
    return Promise.resolve(this);
  }
  sendCommand(args: string[]): Promise<unknown> {
    log.push(args[0]!);
    return Promise.resolve(0);
  }
  up(): void {
    this.isOpen = this.isReady = true;
    this.emit('ready');
  }
}

jest.unstable_mockModule('ioredis', () => ({ Redis: IoRedisStandIn, default: IoRedisStandIn }));
jest.unstable_mockModule('redis', () => ({ createClient: () => new NodeRedisStandIn() }));

const { RedisStore } = await import('./redis.store.js');
const { VerificationOptionsError } = await import('../core/option-rules.js');

const URL = 'redis://127.0.0.1:6379';

beforeEach(() => {
  jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'clearImmediate', 'queueMicrotask'] });
  log.length = 0;
  opened.ioredis.length = opened.redis.length = 0;
  ending = 'answered';
  refusal = undefined;
  v4 = false;
});

afterEach(() => {
  jest.useRealTimers();
});

/** What `promise` came to so far. */
function outcome(promise: Promise<unknown>): { now: unknown } {
  const seen: { now: unknown } = { now: 'pending' };
  promise.then(
    () => (seen.now = 'done'),
    (error: unknown) => (seen.now = error),
  );
  return seen;
}

describe('the library a store opened from a URL uses', () => {
  it.each([
    [undefined, 1, 0],
    ['ioredis', 1, 0],
    ['redis', 0, 1],
  ] as const)('driver %s: %i ioredis client(s), %i node-redis client(s)', async (driver, io, node) => {
    const store = new RedisStore({ url: URL, ...(driver && { driver }) });
    await store.ready();
    expect([opened.ioredis.length, opened.redis.length]).toStrictEqual([io, node]);
    await store.close();
  });

  it('takes redis:// and rediss:// in any case, and nothing that only contains one', async () => {
    for (const url of ['REDIS://127.0.0.1:1', 'Rediss://127.0.0.1:1', 'redis://[not-a-host']) {
      const store = new RedisStore({ url });
      await store.ready();
      await store.close();
    }
    for (const url of ['xredis://127.0.0.1:1', 'http://redis://127.0.0.1:1', 'redis:/127.0.0.1:1'])
      expect(() => new RedisStore({ url })).toThrow(
        new VerificationOptionsError('url', 'must start with redis:// or rediss://', 'RedisStore'),
      );
    expect(opened.ioredis).toHaveLength(3);
  });
});

describe("the password of a store's URL", () => {
  it('is in no error, as written in the URL or decoded', async () => {
    const store = new RedisStore({ url: 'redis://app:pa%40ss-7f3c@127.0.0.1:6379' });
    await store.ready();
    opened.ioredis[0]!.up();
    refusal = 'ERR auth "pa@ss-7f3c" (pa%40ss-7f3c) refused';
    const error = (await store.publish('ch', 'm').catch((caught: unknown) => caught)) as Error;
    expect(error.message).toBe(
      'Verification store unavailable: publish failed (ERR auth "***" (***) refused)',
    );
    await store.close();
  });
});

describe('close() of a store on its own ioredis client', () => {
  it('quits it gracefully when it is ready, then drops what is left', async () => {
    const store = new RedisStore({ url: URL });
    await store.ready();
    opened.ioredis[0]!.up();
    await store.publish('ch', 'm');
    await store.close();
    expect(log).toStrictEqual(['PUBLISH', 'QUIT', 'disconnect']);
  });

  it('drops it at once while it is still connecting: no QUIT waits for a connection', async () => {
    const store = new RedisStore({ url: URL });
    await store.ready();
    await store.close();
    expect(log).toStrictEqual(['disconnect']);
  });

  it('drops it at the deadline when Redis does not answer QUIT, and as soon as QUIT fails', async () => {
    ending = 'hung';
    const store = new RedisStore({ url: URL, commandTimeoutMs: 500 });
    await store.ready();
    opened.ioredis[0]!.up();
    const closing = outcome(store.close());
    await jest.advanceTimersByTimeAsync(499);
    expect(closing.now).toBe('pending');
    expect(log).toStrictEqual(['QUIT']);
    await jest.advanceTimersByTimeAsync(1);
    expect(closing.now).toBe('done');
    expect(log).toStrictEqual(['QUIT', 'disconnect']);
    expect(jest.getTimerCount()).toBe(0);

    ending = 'failed';
    const failing = new RedisStore({ url: URL, commandTimeoutMs: 60_000 });
    await failing.ready();
    opened.ioredis[1]!.up();
    await failing.close();
    expect(log.slice(2)).toStrictEqual(['QUIT', 'disconnect']);
    expect(jest.getTimerCount()).toBe(0);
  });
});

describe.each([
  ['v5', false, 'close', 'destroy'],
  ['v4', true, 'quit', 'disconnect'],
] as const)('close() of a store on its own node-redis client (%s)', (_name, legacy, graceful, drop) => {
  beforeEach(() => {
    v4 = legacy;
  });

  it(`ends it gracefully (${graceful}) when it is ready, then drops what is left`, async () => {
    const store = new RedisStore({ url: URL, driver: 'redis' });
    await store.ready();
    opened.redis[0]!.up();
    await store.publish('ch', 'm');
    await store.close();
    expect(log).toStrictEqual(['PUBLISH', graceful, drop]);
    expect(opened.redis[0]!.isOpen).toBe(false);
  });

  it('drops it at once while it is connecting, and drops a connection that completes after', async () => {
    const store = new RedisStore({ url: URL, driver: 'redis' });
    await store.ready();
    await store.close();
    expect(log).toStrictEqual([drop]);
    const client = opened.redis[0]!;
    expect(client.isOpen).toBe(false);
    client.up();
    expect(client.isOpen).toBe(false);
  });

  it(`drops it at the deadline when ${graceful} hangs`, async () => {
    ending = 'hung';
    const store = new RedisStore({ url: URL, driver: 'redis', commandTimeoutMs: 500 });
    await store.ready();
    opened.redis[0]!.up();
    const closing = outcome(store.close());
    await jest.advanceTimersByTimeAsync(499);
    expect(closing.now).toBe('pending');
    await jest.advanceTimersByTimeAsync(1);
    expect(closing.now).toBe('done');
    expect(log).toStrictEqual([graceful, drop]);
    expect(opened.redis[0]!.isOpen).toBe(false);
  });
});
