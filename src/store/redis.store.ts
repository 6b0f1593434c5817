import type { RedisDriverName } from './open-redis-client.js';
import type { RedisClientLike } from './redis-command-runner.js';
import { errorMessage, RedisConnection, type Send } from './redis-connection.js';
import { CLAIM_DUE, KEY_OPERATIONS, replaceIfEqualsCall } from './redis-scripts.js';
import { RedisScriptSender } from './redis-script-sender.js';
import { assertBatch, assertClaim, assertDueAt, assertIncrement, assertWrite } from './store-arguments.js';
import { asString, decodeReply, keyOperationsArguments, plainCommand } from './redis-key-operations.js';
import { VerificationStoreUnavailableError } from './store-unavailable.error.js';
import { RedisSubscriber, subscriberCheck, subscriberConnection } from './redis-subscriber.js';
import type { StoreBatchResults, StoreOperation, StoreOperationResults as Results } from './store-batch.js';
import { keyInOrder } from './key-order.js';
import type { StoreMessageListener, VerificationStore } from './verification-store.interface.js';
import type { StoreWriteOptions } from './verification-store.interface.js';

export interface RedisStoreOptions {
  /** The host's connected client: ioredis (Redis or Cluster) or node-redis (client or cluster). Never closed by the store. */
  client?: RedisClientLike;
  /** `redis://` or `rediss://` URL for a connection the store opens (and closes) itself. */
  url?: string;
  /** Library used to open `url`. Default: ioredis when installed, else redis (node-redis). */
  driver?: RedisDriverName;
  /** Put before every key and queue name. Default `pv:`. */
  keyPrefix?: string;
  /** Milliseconds since the epoch; every TTL and due time is measured on it. Default `Date.now`. */
  clock?: () => number;
  /** Each operation rejects with VerificationStoreUnavailableError when Redis has not answered by then. Default 1000 ms. */
  commandTimeoutMs?: number;
  /** How often a subscribed store checks that its subscriber connection still hears (RedisSubscriber). Default 30,000 ms; 0: never. */
  subscriberCheckMs?: number;
}

/**
 * VerificationStore on Redis, shared by every instance of a deployment. Values carry their
 * logical expiry on the store's clock (see redis-scripts.ts); operations that must be atomic
 * are Lua scripts (RedisScriptSender) of one key on a Redis Cluster, so keys work there as
 * given: the module puts `{hash tags}` in keys where it needs them.
 */
export class RedisStore implements VerificationStore {
  private readonly clock: () => number;
  private readonly keyPrefix: string;
  private readonly connection: RedisConnection;
  private closed = false;
  private readonly subscriber: RedisSubscriber;
  /** Key operations issued since the last group was sent (see `queue`). */
  private pending: Queued[] | undefined;
  /** Set once Redis refused a group's keys of several slots (a cluster-mode endpoint, plain client). */
  private keyByKey = false;
  /**
   * The latest first group of several keys: until one is answered, the groups after it wait. Redis may
   * refuse it (CROSSSLOT) and its operations then go again a key at a time, after anything sent meanwhile.
   */
  private firstGroup: Promise<void> | undefined;
  /** Set once such a group was answered (run, or refused: keyByKey); one of keys of a single slot counts too. */
  private groupAnswered = false;
  private readonly scripts = new RedisScriptSender();

  constructor(options: RedisStoreOptions) {
    this.clock = options.clock ?? Date.now;
    this.keyPrefix = options.keyPrefix ?? 'pv:';
    this.connection = new RedisConnection(options, () => this.scripts.forget());
    const check = subscriberCheck(options.subscriberCheckMs, this.keyPrefix, (c, m) => this.publish(c, m));
    const open = subscriberConnection(() => this.connection.client(), check);
    this.subscriber = new RedisSubscriber(open, this.connection.timeoutMs);
  }

  /** Resolves once the client library is loaded (a URL without ioredis or redis installed: rejects); not Redis itself. */
  async ready(): Promise<void> {
    await this.connection.client();
  }

  now(): number {
    return this.clock();
  }

  async get(key: string): Promise<string | null> {
    return this.queue('get', { op: 'get', key }) as Promise<string | null>;
  }

  async set(key: string, value: string, ttlMs: number): Promise<void> {
    assertWrite(value, ttlMs);
    await this.queue('set', { op: 'set', key, value, ttlMs });
  }

  async setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean> {
    assertWrite(value, ttlMs);
    return this.queue('setIfAbsent', { op: 'setIfAbsent', key, value, ttlMs }) as Promise<boolean>;
  }

  async delete(key: string): Promise<void> {
    await this.queue('delete', { op: 'delete', key });
  }

  async increment(key: string, by: number, ttlMs: number, options?: StoreWriteOptions) {
    assertIncrement(by, ttlMs);
    const operation = { op: 'increment', key, by, ttlMs, ...(options && { options }) } as const;
    return this.queue('increment', operation) as Promise<Results['increment']>;
  }

  /** The operations, each as its method (see `queue`): one round trip. */
  async batch<const T extends readonly StoreOperation[]>(operations: T): Promise<StoreBatchResults<T>> {
    assertBatch(operations);
    return Promise.all(operations.map((operation) => this.queue('batch', operation))) as Promise<
      StoreBatchResults<T>
    >;
  }

  /**
   * Takes a key operation into the group sent once the code running now has issued its other
   * operations. The group waits on a microtask, not a timer: a host's fake timers would hold a timer
   * back. On one Redis the group's reads of keys it does not write go as one MGET and the rest as one
   * KEY_OPERATIONS call, in the order issued, each operation answering alone as its method would; on a
   * cluster, where a call cannot span slots, one command per key. A group of one is the plain command.
   */
  private queue(name: string, operation: StoreOperation): Promise<unknown> {
    if (this.closed)
      return Promise.reject(new VerificationStoreUnavailableError(name, 'the store is closed'));
    return new Promise((resolve, reject) => {
      if (this.pending === undefined) {
        this.pending = [];
        void Promise.resolve().then(() => this.flush());
      }
      this.pending.push({ name, operation, resolve, reject });
    });
  }

  /**
   * Sends the pending group under one deadline, then settles each operation with its own answer
   * (after the deadline's timer is cleared: nothing of the store runs on once an operation answers).
   */
  private async flush(): Promise<void> {
    const group = this.pending;
    if (group === undefined) return;
    this.pending = undefined;
    const earlier = this.groupAnswered ? undefined : this.firstGroup;
    let replies: unknown[] | undefined;
    try {
      const sent = this.connection.within(async (sendAny, clustered) => {
        const send = this.scripts.counting(sendAny, clustered);
        // Under the deadline: while Redis is down, a group fails one deadline after it was issued.
        if (earlier) await earlier;
        if (clustered || this.keyByKey) return this.commandPerKey(send, group);
        if (group.length === 1) return [await this.one(send, group[0]!.operation)];
        return this.inCalls(send, group);
      });
      if (!this.groupAnswered && group.length > 1) {
        // The groups after it wait for it; a failed one leaves the next to go first.
        this.firstGroup = sent.then(
          () => void (this.groupAnswered = true),
          () => undefined,
        );
      }
      replies = (await sent) as unknown[] | undefined;
    } catch (error) {
      // What is settled already stays so.
      for (const entry of group) entry.reject(this.connection.failure(entry.name, error));
      return;
    }
    if (replies) group.forEach((entry, i) => this.settle(entry, replies[i]));
  }

  /** A command per key, each settled as it answers: a slow cluster node holds only its keys. */
  private async commandPerKey(send: Send, group: readonly Queued[]): Promise<undefined> {
    const operations = group.map((entry) => entry.operation);
    await Promise.all(
      keyInOrder(operations, (operation, i) =>
        this.one(send, operation).then(
          (reply) => this.settle(group[i]!, reply),
          (error: unknown) => group[i]!.reject(this.connection.failure(group[i]!.name, error)),
        ),
      ),
    );
    return undefined;
  }

  /**
   * The group in calls of at most KEYS_PER_CALL keys, all written at once: reads of keys the group does
   * not write as one MGET, the rest as KEY_OPERATIONS. A cluster-mode endpoint behind a plain client
   * refuses a call whose keys span slots before it runs anything: that call's operations go a command
   * per key (an error answering for its operation alone), and so does every group after it.
   */
  private async inCalls(send: Send, group: readonly Queued[]): Promise<unknown[]> {
    const written = new Set(group.filter((e) => e.operation.op !== 'get').map((e) => e.operation.key));
    const reads: number[] = [];
    const scripted: number[] = [];
    group.forEach(({ operation: { op, key } }, i) =>
      (op === 'get' && !written.has(key) ? reads : scripted).push(i),
    );
    const replies: unknown[] = new Array(group.length);
    const calls: Promise<void>[] = [];
    const call = (at: number[], sent: (operations: StoreOperation[]) => Promise<unknown>): void => {
      for (let from = 0; from < at.length; from += KEYS_PER_CALL) {
        const part = at.slice(from, from + KEYS_PER_CALL);
        const operations = part.map((i) => group[i]!.operation);
        const answered = sent(operations).catch((error: unknown) => {
          if (!errorMessage(error).startsWith('CROSSSLOT')) throw error;
          this.keyByKey = true;
          const alone = (operation: StoreOperation) =>
            this.one(send, operation).catch((failed: unknown) => [errorMessage(failed)]);
          return Promise.all(keyInOrder(operations, alone));
        });
        calls.push(
          answered.then(
            (answers) => part.forEach((i, n) => (replies[i] = (answers as unknown[])[n])),
            // This call's operations fail (as an operation Redis refused); the other calls answer as run.
            (error: unknown) => part.forEach((i) => (replies[i] = [errorMessage(error)])),
          ),
        );
      }
    };
    const prefixed = (operations: StoreOperation[]) => operations.map(({ key }) => this.keyPrefix + key);
    call(reads, (operations) => send(['MGET', ...prefixed(operations)], prefixed(operations)[0]));
    call(scripted, (operations) => this.keyOperations(send, operations));
    await Promise.all(calls);
    return replies;
  }

  /** Answers an operation with its reply; a reply that is an error fails that operation alone. */
  private settle(entry: Queued, reply: unknown): void {
    try {
      entry.resolve(decodeReply(entry.operation, reply, this.clock()));
    } catch (error) {
      // A key that is not a counter is the caller's TypeError, as on every store.
      entry.reject(error instanceof TypeError ? error : this.connection.failure(entry.name, error));
    }
  }

  /** One key operation's reply: a plain command, or a KEY_OPERATIONS call of one key. */
  private async one(send: Send, operation: StoreOperation): Promise<unknown> {
    const plain = plainCommand(operation, this.clock());
    if (plain) return this.command(send, plain[0], operation.key, ...plain.slice(1));
    return ((await this.keyOperations(send, [operation])) as unknown[])[0];
  }

  /** The operations as one KEY_OPERATIONS call (keys of one slot). */
  private keyOperations(send: Send, operations: readonly StoreOperation[]): Promise<unknown> {
    const keys = operations.map((operation) => operation.key);
    const redisKeys = keys.map((key) => this.keyPrefix + key);
    return this.scripts.call(
      send,
      KEY_OPERATIONS,
      redisKeys,
      keyOperationsArguments(operations, this.clock()),
    );
  }

  async schedule(queue: string, member: string, dueAt: number): Promise<void> {
    assertDueAt(dueAt);
    await this.run('schedule', (send) => this.command(send, 'ZADD', queue, String(dueAt), member));
  }

  async replaceIfEquals(key: string, was: string, value: string | null, ttlMs: number): Promise<boolean> {
    const call = replaceIfEqualsCall(this.keyPrefix + key, this.clock(), was, value, ttlMs);
    return Number(await this.run('replaceIfEquals', (send) => this.scripts.call(send, ...call))) === 1;
  }

  async claimDue(queue: string, limit: number, leaseMs: number): Promise<string[]> {
    assertClaim(limit, leaseMs);
    if (limit === 0) return [];
    const now = this.clock();
    const reply = await this.run('claimDue', (send) =>
      this.scripts.call(
        send,
        CLAIM_DUE,
        [this.keyPrefix + queue],
        [String(now), String(limit), String(now + leaseMs)],
      ),
    );
    return (reply as unknown[]).map((member) => asString(member) ?? '');
  }

  async unschedule(queue: string, member: string): Promise<void> {
    await this.run('unschedule', (send) => this.command(send, 'ZREM', queue, member));
  }

  async queueSize(queue: string): Promise<number> {
    const reply = await this.run('queueSize', (send) => this.command(send, 'ZCARD', queue));
    return Number(reply);
  }

  async publish(channel: string, message: string): Promise<void> {
    await this.run('publish', (send) => this.command(send, 'PUBLISH', channel, message));
  }

  /** Listens on a dedicated connection (see RedisSubscriber); rejects when Redis does not answer in time. */
  async subscribe(channel: string, listener: StoreMessageListener, onGap?: () => void): Promise<() => void> {
    if (this.closed) throw new VerificationStoreUnavailableError('subscribe', 'the store is closed');
    const subscribing = this.subscriber.subscribe(this.keyPrefix + channel, listener, onGap);
    // Awaited under the deadline below, once the connection is ready: never an unhandled rejection.
    subscribing.catch(() => undefined);
    try {
      return (await this.connection.within(() => subscribing)) as () => void;
    } catch (error) {
      // Subscribed after all, too late: leave no listener behind.
      subscribing.then((unsubscribe) => unsubscribe()).catch(() => undefined);
      throw this.connection.failure('subscribe', error);
    }
  }

  /** Closes its subscriber and the connection it opened from a URL (a client given stays open). Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // What was issued before close() is sent, and answered, before the connection goes.
    await this.flush();
    await this.subscriber.close();
    await this.connection.release();
  }

  /** A single-key command on the prefixed key, routed by that key on a cluster. */
  private command(send: Send, name: string, key: string, ...args: string[]): Promise<unknown> {
    const redisKey = this.keyPrefix + key;
    return send([name, redisKey, ...args], redisKey);
  }

  /**
   * Runs one command under the store's deadline. Every failure of Redis or of the connection
   * becomes VerificationStoreUnavailableError with a redacted reason. A key operation waiting in
   * the group is sent first, so commands reach Redis in the order they were issued.
   */
  private async run(operation: string, body: (send: Send) => Promise<unknown>): Promise<unknown> {
    if (this.closed) throw new VerificationStoreUnavailableError(operation, 'the store is closed');
    void this.flush();
    const earlier = this.groupAnswered ? undefined : this.firstGroup;
    try {
      return await this.connection.within(async (send, clustered) => {
        if (earlier) await earlier;
        return body(this.scripts.counting(send, clustered));
      });
    } catch (error) {
      throw this.connection.failure(operation, error);
    }
  }
}

/** The most key operations one KEY_OPERATIONS call carries (a start issues about 60 at once). */
export const KEYS_PER_CALL = 128;

/** A key operation waiting in the group (see `queue`). */
interface Queued {
  readonly name: string;
  readonly operation: StoreOperation;
  readonly resolve: (answer: unknown) => void;
  readonly reject: (error: unknown) => void;
}
