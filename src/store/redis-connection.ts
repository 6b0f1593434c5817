import { setMaxListeners } from 'node:events';
import { openRedisClient, type RedisDriverName } from './open-redis-client.js';
import {
  createCommandRunner,
  type RedisClientLike,
  type RedisCommandRunner,
} from './redis-command-runner.js';
import { redactSecrets, VerificationStoreUnavailableError } from './store-unavailable.error.js';
import { PhoneVerificationError } from '../core/phone-verification.error.js';
import { VerificationOptionsError } from '../core/option-rules.js';

/** What opens the connection (RedisStoreOptions' part). */
export interface RedisConnectionOptions {
  client?: RedisClientLike;
  url?: string;
  driver?: RedisDriverName;
  commandTimeoutMs?: number;
}

/** The longest delay a Node timer keeps (2^31 - 1 ms). */
export const MAX_TIMER_MS = 2_147_483_647;

/** Sends one command; `key` routes it on a cluster. */
export type Send = (args: string[], key: string | undefined) => Promise<unknown>;

interface Opened {
  readonly client: unknown;
  readonly runner: RedisCommandRunner;
  readonly owned: boolean;
}

/**
 * RedisStore's connection: the host's client or one opened from a URL, commands under the store's
 * deadline, and every failure as VerificationStoreUnavailableError naming the operation, with the
 * URL's password scrubbed from its reason.
 */
export class RedisConnection {
  readonly timeoutMs: number;
  private readonly secrets: string[];
  private readonly opened: Promise<Opened>;

  /** `failed`: told of every `within` that rejects (the store's scripts may be gone with a restart). */
  constructor(
    options: RedisConnectionOptions,
    private readonly failed: () => void = () => undefined,
  ) {
    this.timeoutMs = options.commandTimeoutMs ?? 1000;
    // Node runs a longer timer at once (a 32-bit delay): every operation would fail after 1 ms.
    if (!Number.isFinite(this.timeoutMs) || this.timeoutMs <= 0 || this.timeoutMs > MAX_TIMER_MS) {
      throw new VerificationOptionsError(
        'commandTimeoutMs',
        `must be a positive number of at most ${MAX_TIMER_MS} ms (got ${options.commandTimeoutMs})`,
        'RedisStore',
      );
    }
    if ((options.client === undefined) === (options.url === undefined)) {
      throw new VerificationOptionsError(
        'client',
        'or `url`: give exactly one (`client` an ioredis or node-redis client)',
        'RedisStore',
      );
    }
    this.secrets = options.url ? urlSecrets(options.url) : [];
    if (options.client !== undefined) {
      this.opened = Promise.resolve({
        client: options.client,
        runner: createCommandRunner(options.client),
        owned: false,
      });
    } else {
      const url = options.url as string;
      if (!/^rediss?:\/\//i.test(url))
        throw new VerificationOptionsError('url', 'must start with redis:// or rediss://', 'RedisStore');
      const drivers: RedisDriverName[] = options.driver ? [options.driver] : ['ioredis', 'redis'];
      this.opened = openRedisClient(url, { drivers, commandTimeoutMs: this.timeoutMs }).then((client) => ({
        client,
        runner: createCommandRunner(client),
        owned: true,
      }));
      // A failure is reported by every operation and by ready(); this only keeps it from being unhandled.
      this.opened.catch(() => undefined);
    }
  }

  /** The client, once its library is loaded (rejects when a URL was given and none is installed). */
  async client(): Promise<unknown> {
    return (await this.opened).client;
  }

  /**
   * Runs `body` once the client is ready; past the deadline it rejects (`failure` names it) and
   * aborts what node-redis has not written yet.
   */
  async within(body: (send: Send, clustered: boolean) => Promise<unknown>): Promise<unknown> {
    const abort = new AbortController();
    // A group on a cluster sends one command per key, each listening on this signal (node-redis).
    setMaxListeners(0, abort.signal);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const error = new NoAnswer('no answer within the deadline');
        abort.abort(error);
        reject(error);
      }, this.timeoutMs);
    });
    const attempt = async (): Promise<unknown> => {
      const { runner } = await this.opened;
      await runner.untilReady(abort.signal);
      // Nothing is sent past the deadline: the caller was told it failed, and later writes may have gone
      // (a first group's CROSSSLOT answered late, then sent again a key at a time).
      const send: Send = (args, key) =>
        abort.signal.aborted ? Promise.reject(abort.signal.reason) : runner.send(args, key, abort.signal);
      return body(send, runner.clustered);
    };
    try {
      return await Promise.race([attempt(), deadline]);
    } catch (error) {
      this.failed();
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  /** `error` as the host sees it from `operation`. */
  failure(operation: string, error: unknown): Error {
    if (error instanceof VerificationStoreUnavailableError) return error;
    if (error instanceof NoAnswer)
      return new VerificationStoreUnavailableError(operation, `no answer within ${this.timeoutMs} ms`);
    const message = errorMessage(error);
    if (message.startsWith('RedisStore:'))
      return new PhoneVerificationError(redactSecrets(message, this.secrets));
    return new VerificationStoreUnavailableError(
      operation,
      redactSecrets(message, this.secrets) || 'unknown error',
    );
  }

  /** Detaches the store's listeners; closes the client only when the store opened it. */
  async release(): Promise<void> {
    let opened: Opened;
    try {
      opened = await this.opened;
    } catch {
      return;
    }
    await opened.runner.release(opened.owned, this.timeoutMs);
  }
}

/** The deadline passed (named by each operation it stopped). */
class NoAnswer extends PhoneVerificationError {}

export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  return typeof error === 'string' ? error : '';
}

/** The password in a URL, to scrub them from any error text. */
function urlSecrets(url: string): string[] {
  try {
    const parsed = new URL(url);
    return [parsed.password, decodeURIComponent(parsed.password)].filter((part) => part.length > 0);
  } catch {
    return [];
  }
}
