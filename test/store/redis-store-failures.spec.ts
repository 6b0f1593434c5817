import { EventEmitter } from 'node:events';
import { afterEach, describe, expect, it, jest } from '@jest/globals';

/**
 * What a host sees of RedisStore when its Redis client misbehaves: the error each operation rejects
 * with (its operation named, its reason given once, the URL's password never in it), a closed store
 * refusing pub/sub, a subscription that Redis does not confirm in time, and no timer left running.
 * The clients are stand-ins (a client library's failures cannot be provoked on a real Redis); the
 * store opened from a URL gets one through a stand-in `ioredis` module.
 */

/** The URL's password as written (percent-encoded) and as the client library reads it. */
const PASSWORD_IN_URL = 'pa%40ss%3Aw0rd-7f3c';
const PASSWORD = 'pa@ss:w0rd-7f3c';

/** A client library error that quotes its connection's password, as some do in connection errors. */
const leakyError = () =>
  new Error(`ERR connection to redis failed: auth "${PASSWORD}" (${PASSWORD_IN_URL}) refused`);

jest.unstable_mockModule('ioredis', () => {
  class Redis extends EventEmitter {
    status = 'ready';
    constructor(url: string) {
      super();
      if (url.includes('broken-host')) throw leakyError();
    }
    call(): Promise<unknown> {
      return Promise.reject(leakyError());
    }
    quit(): Promise<unknown> {
      return Promise.resolve('OK');
    }
    disconnect(): void {}
  }
  return { Redis, default: Redis };
});

const { RedisStore } = await import('../../src/store/redis.store.js');
const { VerificationStoreUnavailableError } = await import('../../src/store/store-unavailable.error.js');
const { PhoneVerificationError } = await import('../../src/core/phone-verification.error.js');

/** An ioredis-shaped host client; every command answers as `answer` says. No duplicate(): no pub/sub. */
class HostClient extends EventEmitter {
  status = 'ready';
  constructor(private readonly answer: (args: string[]) => Promise<unknown>) {
    super();
  }
  call(command: string, ...args: string[]): Promise<unknown> {
    return this.answer([command, ...args]);
  }
  quit(): Promise<unknown> {
    return Promise.resolve('OK');
  }
  disconnect(): void {}
}

/** The subscriber connection a HostClient's duplicate() gives: SUBSCRIBE answers when the test says. */
class SubscriberCopy extends HostClient {
  disconnected = false;
  /** The SUBSCRIBEs not yet confirmed (the subscriber's check channel's among them). */
  private readonly confirms: (() => void)[] = [];
  /** Set: SUBSCRIBE fails with it at once. */
  refusal: Error | undefined;
  constructor() {
    super(async () => 'OK');
  }
  subscribe(): Promise<unknown> {
    if (this.refusal) return Promise.reject(this.refusal);
    return new Promise((resolve) => this.confirms.push(() => resolve(1)));
  }
  unsubscribe(): Promise<unknown> {
    return Promise.resolve(0);
  }
  override disconnect(): void {
    this.disconnected = true;
  }
  /** Redis confirms the subscriptions now (late or not). */
  confirmed(): void {
    for (const confirm of this.confirms.splice(0)) confirm();
  }
}

class PubSubHostClient extends HostClient {
  readonly copy = new SubscriberCopy();
  duplicate(): SubscriberCopy {
    return this.copy;
  }
}

const hung = () => new Promise<never>(() => undefined);

afterEach(() => {
  jest.useRealTimers();
});

describe('RedisStore: the error a failing client gives the host', () => {
  it('names the operation and gives the reason once when Redis does not answer in time', async () => {
    const store = new RedisStore({ client: new HostClient(hung), commandTimeoutMs: 20 });
    const error = await store.get('k').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(VerificationStoreUnavailableError);
    expect((error as Error).message).toBe(
      'Verification store unavailable: get failed (no answer within 20 ms)',
    );
  });

  it('names each operation of a group that Redis does not answer in time', async () => {
    const store = new RedisStore({ client: new HostClient(hung), commandTimeoutMs: 20 });
    const [got, counted] = await Promise.allSettled([store.get('k'), store.increment('c', 1, 1000)]);
    expect((got as PromiseRejectedResult).reason).toEqual(
      new VerificationStoreUnavailableError('get', 'no answer within 20 ms'),
    );
    expect((counted as PromiseRejectedResult).reason).toEqual(
      new VerificationStoreUnavailableError('increment', 'no answer within 20 ms'),
    );
  });

  it('sends key operations waiting in a group before a later command, in the order they were issued', async () => {
    const sent: string[] = [];
    const store = new RedisStore({
      client: new HostClient(async ([command]) => {
        sent.push(command!);
        return command === 'EVAL' ? [1, 1] : 1;
      }),
    });
    const set = store.set('k', 'v', 1000);
    const scheduled = store.schedule('q', 'm', 1);
    const group = Promise.all([store.setIfAbsent('a', 'v', 1000), store.delete('b')]);
    const published = store.publish('ch', 'changed');
    await Promise.all([set, scheduled, group, published]);
    expect(sent).toEqual(['SET', 'ZADD', 'EVAL', 'PUBLISH']);
  });

  it('gives a client rejection with no message as "unknown error", and a rejected string as its text', async () => {
    const silent = new RedisStore({ client: new HostClient(() => Promise.reject(new Error(''))) });
    await expect(silent.set('k', 'v', 1000)).rejects.toThrow(VerificationStoreUnavailableError);
    await expect(silent.set('k', 'v', 1000)).rejects.toThrow(
      /^Verification store unavailable: set failed \(unknown error\)$/,
    );
    const nothing = new RedisStore({ client: new HostClient(() => Promise.reject(undefined)) });
    await expect(nothing.delete('k')).rejects.toThrow(
      /^Verification store unavailable: delete failed \(unknown error\)$/,
    );
    const text = new RedisStore({
      client: new HostClient(() => Promise.reject('LOADING dataset in memory')),
    });
    const error = await text.queueSize('q').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(VerificationStoreUnavailableError);
    expect((error as Error).message).toBe(
      'Verification store unavailable: queueSize failed (LOADING dataset in memory)',
    );
  });

  it('leaves no timer running once an operation has answered', async () => {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'queueMicrotask'] });
    const store = new RedisStore({ client: new HostClient(async () => 'OK'), commandTimeoutMs: 60_000 });
    await store.set('k', 'v', 1000);
    await expect(store.delete('k').then(() => 'answered')).resolves.toBe('answered');
    expect(jest.getTimerCount()).toBe(0);
  });
});

describe('RedisStore opened from a URL with a password', () => {
  const url = `redis://app:${PASSWORD_IN_URL}@127.0.0.1:6379`;

  it('never puts the password in an operation’s error, in either form', async () => {
    const store = new RedisStore({ url, commandTimeoutMs: 1000 });
    await store.ready();
    for (const call of [
      () => store.get('k'),
      () => store.increment('c', 1, 1000),
      () => store.publish('ch', 'm'),
    ]) {
      const error = (await call().catch((caught: unknown) => caught)) as Error;
      expect(error).toBeInstanceOf(VerificationStoreUnavailableError);
      expect(error.message).toMatch(
        /^Verification store unavailable: \w+ failed \(ERR connection to redis failed/,
      );
      expect(`${error.message}\n${error.stack}`).not.toContain(PASSWORD);
      expect(`${error.message}\n${error.stack}`).not.toContain(PASSWORD_IN_URL);
    }
    await store.close();
  });

  it('a connection that cannot be opened: ready() rejects, operations refuse without the password, close() resolves', async () => {
    const store = new RedisStore({
      url: `redis://app:${PASSWORD_IN_URL}@broken-host:6379`,
      commandTimeoutMs: 1000,
    });
    await expect(store.ready()).rejects.toThrow('ERR connection to redis failed');
    const error = (await store.get('k').catch((caught: unknown) => caught)) as Error;
    expect(error).toBeInstanceOf(VerificationStoreUnavailableError);
    expect(error.message).not.toContain(PASSWORD);
    expect(error.message).not.toContain(PASSWORD_IN_URL);
    await expect(store.close()).resolves.toBeUndefined();
  });
});

describe('RedisStore pub/sub', () => {
  it('a closed store refuses publish and subscribe, naming each', async () => {
    const client = new PubSubHostClient(async () => 1);
    const store = new RedisStore({ client });
    await store.close();
    await expect(store.publish('status', 'm')).rejects.toThrow(
      new VerificationStoreUnavailableError('publish', 'the store is closed'),
    );
    const subscribing = store.subscribe('status', () => undefined);
    await expect(subscribing).rejects.toThrow(VerificationStoreUnavailableError);
    await expect(subscribing).rejects.toThrow(
      /^Verification store unavailable: subscribe failed \(the store is closed\)$/,
    );
  });

  it('a subscription Redis does not confirm in time rejects, and leaves no listener when confirmed late', async () => {
    const client = new PubSubHostClient(async () => 1);
    const store = new RedisStore({ client, keyPrefix: 'pv-late:', commandTimeoutMs: 30 });
    const heard: string[] = [];
    const error = await store
      .subscribe('status', (message) => void heard.push(message))
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(VerificationStoreUnavailableError);
    expect((error as Error).message).toBe(
      'Verification store unavailable: subscribe failed (no answer within 30 ms)',
    );
    client.copy.confirmed();
    await new Promise((resolve) => setImmediate(resolve));
    client.copy.emit('message', 'pv-late:status', 'after the deadline');
    expect(heard).toEqual([]);
    // Its only listener gone, the store closes the subscriber connection it opened.
    expect(client.copy.disconnected).toBe(true);
    await store.close();
  });

  it('a subscription Redis refuses rejects as unavailable, naming subscribe and the reason', async () => {
    const client = new PubSubHostClient(async () => 1);
    client.copy.refusal = new Error('NOPERM this user has no permissions to access the channel');
    const store = new RedisStore({ client });
    const error = (await store
      .subscribe('status', () => undefined)
      .catch((caught: unknown) => caught)) as Error;
    expect(error).toBeInstanceOf(VerificationStoreUnavailableError);
    expect(error.message).toBe(
      'Verification store unavailable: subscribe failed (NOPERM this user has no permissions to access the channel)',
    );
    await store.close();
  });

  it('a subscription confirmed in time delivers, and leaves no timer running', async () => {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'queueMicrotask', 'setImmediate'] });
    const client = new PubSubHostClient(async () => 1);
    // Without the subscriber's check, whose period is a timer of its own while subscribed.
    const store = new RedisStore({
      client,
      keyPrefix: 'pv-ok:',
      commandTimeoutMs: 60_000,
      subscriberCheckMs: 0,
    });
    const heard: string[] = [];
    const subscribing = store.subscribe('status', (message) => void heard.push(message));
    await new Promise((resolve) => setImmediate(resolve));
    client.copy.confirmed();
    await subscribing;
    expect(jest.getTimerCount()).toBe(0);
    client.copy.emit('message', 'pv-ok:status', 'changed');
    expect(heard).toEqual(['changed']);
  });

  it('a host client that cannot subscribe: its own error, not an outage', async () => {
    const store = new RedisStore({ client: new HostClient(async () => 1) });
    const error = (await store
      .subscribe('status', () => undefined)
      .catch((caught: unknown) => caught)) as Error;
    expect(error).toBeInstanceOf(PhoneVerificationError);
    expect(error).not.toBeInstanceOf(VerificationStoreUnavailableError);
    expect(error.message).toBe(
      'RedisStore: subscribing needs a client with duplicate() (ioredis or node-redis)',
    );
  });
});
