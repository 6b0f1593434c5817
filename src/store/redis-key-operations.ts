import { notACounter } from './store-arguments.js';
import type { StoreOperation } from './store-batch.js';
import { PhoneVerificationError } from '../core/phone-verification.error.js';

/**
 * How the store's key operations are written as Redis commands and read back: values as
 * `<expiresAt>:<value>` on the store's clock (the Lua side is redis-scripts.ts). Keys are given
 * unprefixed; the store prefixes them.
 */

/** get, set and delete as a plain command after the key (name first); undefined for a script's. */
export function plainCommand(operation: StoreOperation, now: number): string[] | undefined {
  switch (operation.op) {
    case 'get':
      return ['GET'];
    case 'set':
      return ['SET', `${now + operation.ttlMs}:${operation.value}`, 'PX', pxOf(operation.ttlMs)];
    case 'delete':
      return ['DEL'];
    default:
      return undefined;
  }
}

/** KEY_OPERATIONS' ARGV for `operations` (its KEYS are their keys, in order). */
export function keyOperationsArguments(operations: readonly StoreOperation[], now: number): string[] {
  const args = [String(now)];
  for (const operation of operations) {
    switch (operation.op) {
      case 'get':
        args.push('g');
        break;
      case 'delete':
        args.push('d');
        break;
      case 'set':
      case 'setIfAbsent':
        args.push(
          operation.op === 'set' ? 's' : 'a',
          `${now + operation.ttlMs}:${operation.value}`,
          pxOf(operation.ttlMs),
        );
        break;
      case 'increment': {
        const px = pxOf(operation.ttlMs);
        // `r`: an increment that starts its counter's TTL again (StoreWriteOptions.renew).
        args.push(
          operation.options?.renew === true ? 'r' : 'i',
          String(operation.by),
          px,
          `${now + Number(px)}:`,
        );
        break;
      }
    }
  }
  return args;
}

/**
 * An operation's reply (plain command or script) as its method answers it. A one-element list is the
 * script's error for that operation alone: a TypeError for a key that is not a counter, else an Error
 * with Redis' message.
 */
export function decodeReply(operation: StoreOperation, reply: unknown, now: number): unknown {
  if (Array.isArray(reply) && reply.length === 1) {
    const message = asString(reply[0]) ?? '';
    throw message === 'NOT_A_COUNTER' ? notACounter() : new PhoneVerificationError(message);
  }
  switch (operation.op) {
    case 'get':
      return decodeLive(asString(reply), now);
    case 'setIfAbsent':
      return Number(reply) === 1;
    case 'increment': {
      const counted = asString(reply) ?? '';
      const separator = counted.indexOf(':');
      return { value: Number(counted.slice(separator + 1)), expiresAt: Number(counted.slice(0, separator)) };
    }
    default:
      return undefined;
  }
}

/** Redis answers a PX of whole milliseconds; rounding up keeps the real expiry after the logical one. */
function pxOf(ttlMs: number): string {
  return String(Math.max(1, Math.ceil(ttlMs)));
}

export function asString(reply: unknown): string | null {
  if (reply === null || reply === undefined) return null;
  // A Buffer's String is its UTF-8 text.
  return String(reply);
}

/** The value of an encoded `<expiresAt>:<value>`, or null when it has expired or does not parse. */
function decodeLive(raw: string | null, now: number): string | null {
  if (raw === null) return null;
  const separator = raw.indexOf(':');
  if (separator <= 0) return null;
  const expiresAt = Number(raw.slice(0, separator));
  if (!Number.isFinite(expiresAt) || expiresAt <= now) return null;
  return raw.slice(separator + 1);
}
