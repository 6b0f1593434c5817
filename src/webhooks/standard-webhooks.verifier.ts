import { createHmac, timingSafeEqual } from 'node:crypto';
import type { WebhookVerifier } from '../options/verification.options.js';
import { ArgumentTypeError } from '../core/phone-verification.error.js';

/** Headers of a webhook request as Express and Fastify give them (lower-case names). */
export type WebhookHeaders = Record<string, string | string[] | undefined>;

/** Why a signature was refused; logged for the operator, never sent back. */
export type SignatureRejection =
  'missing_headers' | 'bad_timestamp' | 'stale_timestamp' | 'no_matching_signature';

export interface StandardWebhooksVerifierOptions {
  /** Largest distance between `webhook-timestamp` and now, either way. Default 300 s. */
  toleranceSeconds?: number;
  /** Now in ms since the epoch; the module passes the store's clock. Default `Date.now`. */
  clock?: () => number;
}

const SECRET_PREFIX = 'whsec_';
const TIMESTAMP = /^\d{1,15}$/;

/**
 * Standard Webhooks (https://www.standardwebhooks.com): `v1,` + base64 HMAC-SHA256 of
 * `{webhook-id}.{webhook-timestamp}.{raw body}` with the bytes of a `whsec_<base64>` secret.
 * Several secrets are accepted at once (rotation) and the header may carry several signatures
 * (space-separated); one match is enough. The timestamp tolerance and the clock are options,
 * which the `standardwebhooks` package fixes to 5 minutes and `Date.now` (its output agrees with
 * this one byte for byte: see test/webhooks). Secrets are decoded once, at construction.
 */
export class StandardWebhooksVerifier implements WebhookVerifier {
  readonly #keys: Buffer[];
  private readonly toleranceSeconds: number;
  private readonly clock: () => number;

  constructor(secrets: string | readonly string[], options: StandardWebhooksVerifierOptions = {}) {
    const list = typeof secrets === 'string' ? [secrets] : [...secrets];
    if (list.length === 0) throw new ArgumentTypeError('StandardWebhooksVerifier needs at least one secret');
    this.#keys = list.map(decodeSecret);
    this.toleranceSeconds = options.toleranceSeconds ?? 300;
    this.clock = options.clock ?? Date.now;
  }

  verify(rawBody: Buffer, headers: WebhookHeaders): boolean {
    return this.check(rawBody, headers) === undefined;
  }

  /** Undefined when the request is authentic and fresh; otherwise why not. */
  check(rawBody: Buffer, headers: WebhookHeaders): SignatureRejection | undefined {
    const id = header(headers, 'webhook-id');
    const timestamp = header(headers, 'webhook-timestamp');
    const signatures = header(headers, 'webhook-signature');
    if (!id || !timestamp || !signatures) return 'missing_headers';
    if (!TIMESTAMP.test(timestamp)) return 'bad_timestamp';
    const nowSeconds = Math.floor(this.clock() / 1000);
    if (Math.abs(nowSeconds - Number(timestamp)) > this.toleranceSeconds) return 'stale_timestamp';

    // Compared as base64 text, exactly as the reference library does (no lenient re-decoding).
    const expected = this.#keys.map((key) =>
      Buffer.from(digest(key, id, timestamp, rawBody).toString('base64'), 'utf8'),
    );
    let matched = false;
    for (const candidate of signatures.split(' ')) {
      const comma = candidate.indexOf(',');
      if (comma < 0 || candidate.slice(0, comma) !== 'v1') continue;
      const given = Buffer.from(candidate.slice(comma + 1), 'utf8');
      // Every expected signature is compared (no early exit), each in constant time.
      for (const signature of expected)
        if (given.length === signature.length && timingSafeEqual(given, signature)) matched = true;
    }
    return matched ? undefined : 'no_matching_signature';
  }

  /** The `webhook-signature` value for a message, with the first secret (for a host's own tests). */
  sign(id: string, timestampSeconds: number, rawBody: Buffer | string): string {
    const body = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : rawBody;
    return `v1,${digest(this.#keys[0]!, id, String(timestampSeconds), body).toString('base64')}`;
  }
}

function decodeSecret(secret: string): Buffer {
  if (typeof secret !== 'string') throw new ArgumentTypeError('a webhook secret must be a string');
  const base64 = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  const key = Buffer.from(base64, 'base64');
  // The message names no part of the secret.
  if (key.length === 0)
    throw new ArgumentTypeError('a webhook secret must be "whsec_" followed by base64 bytes');
  return key;
}

function digest(key: Buffer, id: string, timestamp: string, body: Buffer): Buffer {
  return createHmac('sha256', key).update(`${id}.${timestamp}.`, 'utf8').update(body).digest();
}

function header(headers: WebhookHeaders, name: string): string | undefined {
  const value = headers[name];
  const first = Array.isArray(value) ? value[0] : value;
  return typeof first === 'string' && first !== '' ? first : undefined;
}
