/**
 * RedisStore on a host's client of each library (stand-ins of ioredis, plain and Cluster, node-redis and a
 * node-redis cluster), the deadline on jest's clock: when an operation waits for the client and when it is sent
 * at once, what it fails with, what is never written after its caller was told it failed, and what closing
 * the store leaves on the host's client. The same over real Redis: test/store (redis.store, redis-store-edges);
 * a store that opened its own client from a URL: redis-connection.owned.spec.
 */
import { EventEmitter } from 'node:events';
import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { RedisStore } from './redis.store.js';
import { VerificationStoreUnavailableError } from './store-unavailable.error.js';
import { ArgumentTypeError, PhoneVerificationError } from '../core/phone-verification.error.js';
import { VerificationOptionsError } from '../core/option-rules.js';
import {
  byDefault,
  IoRedisHost,
  NodeRedisClusterHost,
  NodeRedisHost,
  outcome,
  settle,
} from '../../test/support/redis-client-stand-ins.js';
import { DRIVERS, Redis } from '../../test/support/redis-link-stand-ins.js';

describe("RedisStore's connection on jest's clock", () => {
  beforeEach(() => {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'clearImmediate', 'queueMicrotask'] });
  });

  afterEach(() => {
    jest.useRealTimers();
  });

  describe('RedisStore on a host ioredis client', () => {
    it.each(['connecting', 'connect', 'reconnecting', 'close'])(
      'while %s, an operation waits for the client to be ready, then is sent; one never ready fails at the deadline and is never sent',
      async (status) => {
        const client = new IoRedisHost();
        client.status = status;
        const store = new RedisStore({ client, keyPrefix: 'pv:', commandTimeoutMs: 500 });
        const first = outcome(store.queueSize('q'));
        await jest.advanceTimersByTimeAsync(499);
        expect(first.now).toBe('pending');
        expect(client.written).toStrictEqual([]);
        client.up();
        await settle();
        expect(first.now).toBe(1);
        expect(client.written).toStrictEqual(['ZCARD pv:q']);
        client.status = status;
        const second = outcome(store.queueSize('late'));
        await jest.advanceTimersByTimeAsync(500);
        expect(second.now).toStrictEqual(
          new VerificationStoreUnavailableError('queueSize', 'no answer within 500 ms'),
        );
        client.up();
        await settle();
        expect(client.written).toStrictEqual(['ZCARD pv:q']);
        await store.close();
      },
    );

    it('sends at once on a connection that ended for good, failing with its reason, not the deadline', async () => {
      const client = new IoRedisHost();
      client.status = 'end';
      const store = new RedisStore({ client, commandTimeoutMs: 60_000 });
      const error = await store.publish('ch', 'm').catch((caught: unknown) => caught);
      expect(error).toStrictEqual(new VerificationStoreUnavailableError('publish', 'Connection is closed.'));
      await store.close();
    });

    it('however many operations wait, the client carries one ready listener of the store, none once it is closed', async () => {
      const client = new IoRedisHost();
      const before = client.listenerCount('ready');
      const store = new RedisStore({ client });
      client.status = 'reconnecting';
      const waiting = Array.from({ length: 20 }, (_, i) => store.publish(`ch${i}`, 'm'));
      await settle();
      expect(client.listenerCount('ready')).toBe(before + 1);
      client.up();
      await Promise.all(waiting);
      expect(client.written).toHaveLength(20);
      await store.close();
      expect(client.listenerCount('ready')).toBe(before);
      // A host's client stays open: the store neither quits nor disconnects it.
      expect(client.written).not.toContain('QUIT');
      expect(client.written).not.toContain('(disconnected)');
    });

    it.each([
      [false, ['MGET pv:a pv:b']],
      [true, ['GET pv:a', 'GET pv:b']],
    ])(
      'a group of reads on a client with isCluster %s: as one MGET on one Redis, one command per key on a cluster',
      async (isCluster, written) => {
        const client = new IoRedisHost(isCluster);
        const store = new RedisStore({ client, keyPrefix: 'pv:' });
        await expect(Promise.all([store.get('a'), store.get('b')])).resolves.toStrictEqual([null, null]);
        expect(client.written).toStrictEqual(written);
        await store.close();
      },
    );
  });

  describe('RedisStore on a host node-redis client', () => {
    it('while it reconnects, an operation waits for it to be ready, then is sent; one never ready fails at the deadline and is never sent', async () => {
      const client = new NodeRedisHost();
      client.isReady = false;
      const store = new RedisStore({ client, keyPrefix: 'pv:', commandTimeoutMs: 500 });
      const first = outcome(store.queueSize('q'));
      await jest.advanceTimersByTimeAsync(499);
      expect(first.now).toBe('pending');
      client.up();
      await settle();
      expect(first.now).toBe(1);

      client.isReady = false;
      const second = outcome(store.queueSize('late'));
      await jest.advanceTimersByTimeAsync(500);
      expect(second.now).toStrictEqual(
        new VerificationStoreUnavailableError('queueSize', 'no answer within 500 ms'),
      );
      client.up();
      await settle();
      expect(client.written).toStrictEqual(['ZCARD pv:q']);
      await store.close();
    });

    it('a command not yet written at the deadline is dropped: never written once the connection frees', async () => {
      const client = new NodeRedisHost();
      const store = new RedisStore({ client, keyPrefix: 'pv:', commandTimeoutMs: 500 });
      client.busy = true;
      const scheduling = outcome(store.schedule('q', 'm', 1));
      await jest.advanceTimersByTimeAsync(500);
      expect(scheduling.now).toStrictEqual(
        new VerificationStoreUnavailableError('schedule', 'no answer within 500 ms'),
      );
      client.write();
      await settle();
      expect(client.written).toStrictEqual([]);
      // Written in time, it answers.
      client.busy = true;
      const counting = outcome(store.queueSize('q'));
      await jest.advanceTimersByTimeAsync(499);
      client.write();
      await settle();
      expect(counting.now).toBe(1);
      expect(client.written).toStrictEqual(['ZCARD pv:q']);
      await store.close();
    });

    it('a client the host closed: sent at once, failing with its reason, not the deadline', async () => {
      const client = new NodeRedisHost();
      client.isOpen = client.isReady = false;
      const store = new RedisStore({ client, commandTimeoutMs: 60_000 });
      const error = await store.get('k').catch((caught: unknown) => caught);
      expect(error).toStrictEqual(new VerificationStoreUnavailableError('get', 'The client is closed'));
      await store.close();
    });

    it('however many operations wait, the client carries one ready listener of the store, none once it is closed', async () => {
      const client = new NodeRedisHost();
      client.isReady = false;
      const store = new RedisStore({ client });
      const waiting = Array.from({ length: 20 }, (_, i) => store.publish(`ch${i}`, 'm'));
      await settle();
      expect(client.listenerCount('ready')).toBe(1);
      client.up();
      await Promise.all(waiting);
      expect(client.written).toHaveLength(20);
      await store.close();
      expect(client.listenerCount('ready')).toBe(0);
      expect(client.isOpen).toBe(true);
    });
  });

  describe('RedisStore on a host node-redis cluster', () => {
    it("routes each command by its key, to the key's master: a write and a group of reads answer", async () => {
      const cluster = new NodeRedisClusterHost();
      const store = new RedisStore({ client: cluster, keyPrefix: 'pv:' });
      await store.set('k', 'v', 1000);
      await expect(Promise.all([store.get('a'), store.get('b')])).resolves.toStrictEqual([null, null]);
      await store.publish('ch', 'm');
      expect(cluster.written.map((line) => line.split(' ').slice(0, 2).join(' '))).toStrictEqual([
        'SET pv:k',
        'GET pv:a',
        'GET pv:b',
        'PUBLISH pv:ch',
      ]);
      await store.close();
      // A host's cluster stays open.
      expect(cluster.written.at(-1)).toBe('PUBLISH pv:ch m');
    });

    it('a group of many keys not yet written at the deadline fails each, never written after, with no listener warning to the host', async () => {
      const cluster = new NodeRedisClusterHost();
      cluster.busy = true;
      const store = new RedisStore({ client: cluster, commandTimeoutMs: 500 });
      const reads = Array.from({ length: 20 }, (_, i) => outcome(store.get(`k${i}`)));
      await jest.advanceTimersByTimeAsync(500);
      await settle();
      for (const read of reads) {
        expect(read.now).toBeInstanceOf(VerificationStoreUnavailableError);
        expect((read.now as Error).message).toMatch(
          /^Verification store unavailable: get failed \((no answer within 500 ms|The command was aborted)\)$/,
        );
      }
      expect(cluster.warnings).toStrictEqual([]);
      cluster.write();
      await settle();
      expect(cluster.written).toStrictEqual([]);
      await store.close();
    });
  });

  describe("RedisStore's deadline and failures", () => {
    it('without commandTimeoutMs, an operation fails at 1000 ms: pending a tick before', async () => {
      const client = new IoRedisHost();
      client.answer = () => new Promise(() => undefined);
      const store = new RedisStore({ client });
      const read = outcome(store.get('k'));
      await jest.advanceTimersByTimeAsync(999);
      expect(read.now).toBe('pending');
      await jest.advanceTimersByTimeAsync(1);
      expect(read.now).toStrictEqual(
        new VerificationStoreUnavailableError('get', 'no answer within 1000 ms'),
      );
      await store.close();
    });

    it('an operation answered leaves no timer; one failed leaves none either', async () => {
      const client = new IoRedisHost();
      const store = new RedisStore({ client, commandTimeoutMs: 60_000 });
      await store.publish('ch', 'm');
      expect(jest.getTimerCount()).toBe(0);
      client.answer = () => Promise.reject(new Error('ERR refused'));
      await expect(store.publish('ch', 'm')).rejects.toThrow(VerificationStoreUnavailableError);
      expect(jest.getTimerCount()).toBe(0);
      await store.close();
    });

    it("Redis's refusal names the operation and its reason; an error of the store's own stays the store's", async () => {
      const client = new IoRedisHost();
      const store = new RedisStore({ client });
      client.answer = () => Promise.reject(new Error('NOPERM no permissions'));
      const refused = await store.queueSize('q').catch((caught: unknown) => caught);
      expect(refused).toStrictEqual(
        new VerificationStoreUnavailableError('queueSize', 'NOPERM no permissions'),
      );
      client.answer = () => Promise.reject(new Error('RedisStore: a reply it cannot read'));
      const own = (await store.queueSize('q').catch((caught: unknown) => caught)) as Error;
      expect(own).toBeInstanceOf(PhoneVerificationError);
      expect(own).not.toBeInstanceOf(VerificationStoreUnavailableError);
      expect(own.message).toBe('RedisStore: a reply it cannot read');
      client.answer = () => Promise.reject({ code: 'ECONNRESET' });
      await expect(store.queueSize('q')).rejects.toStrictEqual(
        new VerificationStoreUnavailableError('queueSize', 'unknown error'),
      );
      await store.close();
    });

    it.each(Object.keys(DRIVERS) as (keyof typeof DRIVERS)[])(
      "a subscription whose connection ends before it is ready fails with the subscriber's reason, not wrapped in a second (%s)",
      async (driver) => {
        const redis = new Redis();
        const client = Object.assign(new EventEmitter(), DRIVERS[driver](redis));
        const store = new RedisStore({ client: client as never, subscriberCheckMs: 0 });
        const subscribing = outcome(store.subscribe('status', () => undefined));
        await settle();
        redis.last().end();
        await settle();
        expect(subscribing.now).toStrictEqual(
          new VerificationStoreUnavailableError('subscribe', 'the subscriber connection is closed'),
        );
        await store.close();
      },
    );

    it("an operation Redis did not answer in time makes the next script go whole (EVAL): Redis may have restarted and lost the store's scripts", async () => {
      const client = new IoRedisHost();
      const store = new RedisStore({ client, keyPrefix: 'pv:', commandTimeoutMs: 500 });
      const scripts = () =>
        client.written.filter((line) => line.startsWith('EVAL')).map((line) => line.split(' ')[0]);
      await store.replaceIfEquals('k', 'a', 'b', 1000);
      await store.replaceIfEquals('k', 'a', 'b', 1000);
      expect(scripts()).toStrictEqual(['EVAL', 'EVALSHA']);
      client.answer = () => new Promise(() => undefined);
      const unanswered = outcome(store.queueSize('q'));
      await jest.advanceTimersByTimeAsync(500);
      expect(unanswered.now).toStrictEqual(
        new VerificationStoreUnavailableError('queueSize', 'no answer within 500 ms'),
      );
      client.answer = byDefault;
      await store.replaceIfEquals('k', 'a', 'b', 1000);
      expect(scripts()).toStrictEqual(['EVAL', 'EVALSHA', 'EVAL']);
      await store.close();
    });
  });

  describe('RedisStore refuses what it cannot connect with', () => {
    it('a client of neither library (a function has a call of its own), naming both and their shapes', () => {
      const call = () => Promise.resolve(null);
      const sendCommand = () => Promise.resolve(null);
      for (const client of [
        null,
        'redis://127.0.0.1:6379',
        call,
        Object.assign(() => null, { status: 'ready' }),
        { call },
        { call: 'call', status: 'ready' },
        { call, status: 1 },
        { sendCommand },
        { sendCommand, masters: [] },
        { sendCommand, slots: [] },
        { sendCommand, isReady: true },
        { sendCommand, isOpen: true },
        { sendCommand: 'send', isReady: true, isOpen: true },
        { sendCommand: 'send', masters: [], slots: [] },
      ]) {
        const make = () => new RedisStore({ client: client as never });
        expect(make).toThrow(ArgumentTypeError);
        expect(make).toThrow(
          'RedisStore: the client must be an ioredis client (Redis or Cluster) or a node-redis client (createClient or createCluster)',
        );
      }
    });

    it('both a client and a URL, or neither', () => {
      for (const options of [{ client: new IoRedisHost(), url: 'redis://127.0.0.1:1' }, {}]) {
        const make = () => new RedisStore(options);
        expect(make).toThrow(VerificationOptionsError);
        expect(make).toThrow(
          'RedisStore: option "client" or `url`: give exactly one (`client` an ioredis or node-redis client)',
        );
      }
    });

    it('a command timeout that is not a positive number a Node timer keeps, naming it and the value', () => {
      for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, -1, 0, 2 ** 31]) {
        const make = () => new RedisStore({ client: new IoRedisHost(), commandTimeoutMs: bad });
        expect(make).toThrow(VerificationOptionsError);
        expect(make).toThrow(
          `RedisStore: option "commandTimeoutMs" must be a positive number of at most 2147483647 ms (got ${bad})`,
        );
      }
      expect(() => new RedisStore({ client: new IoRedisHost(), commandTimeoutMs: 0.5 })).not.toThrow();
      expect(
        () => new RedisStore({ client: new IoRedisHost(), commandTimeoutMs: 2 ** 31 - 1 }),
      ).not.toThrow();
    });
  });
});
