import { errorMessage, type Send } from './redis-connection.js';
import type { RedisScript } from './redis-scripts.js';

/**
 * How RedisStore sends its Lua: EVAL until Redis has run a script on this connection, then EVALSHA
 * (its text once, not with every call). A call answered NOSCRIPT (SCRIPT FLUSH, a restart, a failover)
 * did not run: it goes again as EVAL only when the store has sent nothing since, for a resend lands
 * after whatever went in between
 * (a key's writes out of the order issued, test/store/redis-script-order.spec.ts); otherwise it fails as
 * the store does when Redis fails. On a Redis Cluster every call is EVAL: each node keeps its own scripts.
 */
export class RedisScriptSender {
  /** Scripts Redis has run for this store since a command last failed (by SHA-1). */
  readonly #loaded = new Set<string>();
  /** Commands the store has sent: whether anything went after a call answered NOSCRIPT. */
  #sent = 0;
  #byHash = true;

  /** `send`, counted: every command of the store goes through one. */
  counting(send: Send, clustered: boolean): Send {
    this.#byHash = !clustered;
    return (args, key) => {
      this.#sent += 1;
      return send(args, key).catch((error: unknown) => {
        this.forget();
        throw error;
      });
    };
  }

  /** A command failed or the connection did: Redis may have lost its scripts (a restart); EVAL next. */
  forget(): void {
    this.#loaded.clear();
  }

  /** `script` on `redisKeys` (of one slot) with `args`, through a `counting` send. */
  async call(
    send: Send,
    script: RedisScript,
    redisKeys: readonly string[],
    args: readonly string[],
  ): Promise<unknown> {
    const tail = [String(redisKeys.length), ...redisKeys, ...args];
    if (!this.#byHash || !this.#loaded.has(script.sha)) {
      const reply = await send(['EVAL', script.lua, ...tail], redisKeys[0]);
      if (this.#byHash) this.#loaded.add(script.sha);
      return reply;
    }
    const reply = send(['EVALSHA', script.sha, ...tail], redisKeys[0]);
    const sentAt = this.#sent;
    try {
      return await reply;
    } catch (error) {
      if (!errorMessage(error).startsWith('NOSCRIPT')) throw error;
      this.#loaded.delete(script.sha);
      if (this.#sent !== sentAt) throw error;
      return this.call(send, script, redisKeys, args);
    }
  }
}
