/**
 * Stand-ins of a host's Redis client of each library, as RedisStore uses them (commands, not pub/sub): ioredis
 * (`Redis`, or `Cluster` with `isCluster`), node-redis and a node-redis cluster, each logging what it wrote.
 * src/store/redis-connection.spec.ts runs the store's connection over them on jest's clock.
 */
import { EventEmitter, getMaxListeners } from 'node:events';

/** How Redis answers a command (by default: nil to a read, 1 to the rest). */
export type Answer = (args: string[]) => Promise<unknown>;

export const byDefault: Answer = async ([command]) =>
  command === 'GET' ? null : command === 'MGET' ? [null, null] : 1;

/** An ioredis client (`Redis`, or `Cluster` with `isCluster`): what it wrote, and its connection's state. */
export class IoRedisHost extends EventEmitter {
  status = 'ready';
  readonly written: string[] = [];
  answer: Answer = byDefault;
  constructor(readonly isCluster?: boolean) {
    super();
  }
  call(command: string, ...args: string[]): Promise<unknown> {
    // ioredis without an offline queue refuses a command on a connection that ended.
    if (this.status === 'end') return Promise.reject(new Error('Connection is closed.'));
    this.written.push([command, ...args].join(' '));
    return this.answer([command, ...args]);
  }
  quit(): Promise<unknown> {
    this.written.push('QUIT');
    return Promise.resolve('OK');
  }
  disconnect(): void {
    this.written.push('(disconnected)');
  }
  /** Connected again. */
  up(): void {
    this.status = 'ready';
    this.emit('ready');
  }
}

/**
 * A node-redis client. While `busy`, the commands it was given wait to be written (`write()`); one whose
 * `abortSignal` aborts first is dropped, as node-redis drops it.
 */
export class NodeRedisHost extends EventEmitter {
  isOpen = true;
  isReady = true;
  busy = false;
  readonly written: string[] = [];
  answer: Answer = byDefault;
  private readonly unwritten: { args: string[]; settle: (answer: Promise<unknown>) => void }[] = [];
  sendCommand(args: string[], options?: { abortSignal?: AbortSignal }): Promise<unknown> {
    if (!this.isOpen) return Promise.reject(new Error('The client is closed'));
    if (!this.busy) return this.writing(args);
    return new Promise((resolve, reject) => {
      const entry = { args, settle: resolve };
      this.unwritten.push(entry);
      options?.abortSignal?.addEventListener('abort', () => {
        this.unwritten.splice(this.unwritten.indexOf(entry), 1);
        reject(new Error('The command was aborted'));
      });
    });
  }
  write(): void {
    this.busy = false;
    for (const { args, settle } of this.unwritten.splice(0)) settle(this.writing(args));
  }
  up(): void {
    this.isReady = true;
    this.emit('ready');
  }
  private writing(args: string[]): Promise<unknown> {
    this.written.push(args.join(' '));
    return this.answer(args);
  }
}

/**
 * A node-redis cluster whose every key lives on its own node: a command runs on the node of the key it is
 * routed by, a read-only one on a replica (which refuses writes); a key of another node answers MOVED.
 */
export class NodeRedisClusterHost {
  readonly masters = [];
  readonly slots = [];
  readonly written: string[] = [];
  /**
   * While set (its nodes connecting), commands wait to be written (`write()`), each listening on its abort
   * signal as node-redis does, and dropped when it aborts.
   */
  busy = false;
  /** What Node prints when a signal carries more listeners than its limit (MaxListenersExceededWarning). */
  readonly warnings: string[] = [];
  private readonly listening = new WeakMap<AbortSignal, number>();
  private readonly unwritten: { run: () => void; signal: AbortSignal | undefined }[] = [];
  sendCommand(
    firstKey: string | undefined,
    isReadonly: boolean | undefined,
    args: string[],
    options?: { abortSignal?: AbortSignal },
  ): Promise<unknown> {
    const signal = options?.abortSignal;
    if (!this.busy) return this.running(firstKey, isReadonly, args);
    return new Promise((resolve, reject) => {
      this.unwritten.push({ run: () => resolve(this.running(firstKey, isReadonly, args)), signal });
      if (signal === undefined) return;
      const listeners = (this.listening.get(signal) ?? 0) + 1;
      this.listening.set(signal, listeners);
      const limit = listenerLimit(signal);
      if (limit > 0 && listeners > limit) this.warnings.push(`${listeners} abort listeners on one signal`);
      signal.addEventListener('abort', () => reject(new Error('The command was aborted')), { once: true });
    });
  }
  /** Its nodes connected: what is still to be written is written. */
  write(): void {
    this.busy = false;
    for (const { run, signal } of this.unwritten.splice(0)) if (!signal?.aborted) run();
  }
  /** The host's own: the store never closes it. */
  close(): Promise<void> {
    this.written.push('(closed)');
    return Promise.resolve();
  }
  private running(firstKey: string | undefined, isReadonly: boolean | undefined, args: string[]) {
    const [command, key] = args;
    if (key !== firstKey) return Promise.reject(new Error(`MOVED 1 node-of-${key}`));
    if (isReadonly !== false && command !== 'GET')
      return Promise.reject(new Error("READONLY You can't write against a read only replica."));
    this.written.push(args.join(' '));
    return byDefault(args);
  }
}

/** A signal's listener limit, 0 for none (Node 20's getMaxListeners throws for a limit lifted to 0). */
function listenerLimit(signal: AbortSignal): number {
  try {
    return getMaxListeners(signal);
  } catch {
    return 0;
  }
}

/** What `promise` came to so far: 'pending', its value ('answered' for none), or its error. */
export function outcome(promise: Promise<unknown>): { now: unknown } {
  const seen: { now: unknown } = { now: 'pending' };
  promise.then(
    (value) => (seen.now = value ?? 'answered'),
    (error: unknown) => (seen.now = error),
  );
  return seen;
}

export async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await new Promise((resolve) => setImmediate(resolve));
}
