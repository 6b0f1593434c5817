import { maskPhoneNumber } from '../core/phone-mask.js';

/** Values a log line may carry as `key=value` context. */
export type LogFieldValue = string | number | boolean | null | undefined;
export type LogFields = Record<string, LogFieldValue>;

/** Keys whose values are phone numbers (masked unless the host turned masking off). */
const PHONE_KEYS = new Set(['phone', 'phone_number']);
/** Keys whose values are ids or handles (shortened: enough to correlate, not to reuse). */
const ID_KEYS = new Set(['request_id', 'verification_id', 'handle', 'webhook_id']);

const E164_IN_TEXT = /\+\d{7,15}\b/g;
const UUID_IN_TEXT = /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi;
const BASIC_HEADER = /\bBasic\s+[A-Za-z0-9+/=._~-]{4,}/gi;
const WEBHOOK_SECRET = /\bwhsec_[A-Za-z0-9+/=]+/g;
const REDACTED = '[redacted]';

/** `0f8c2d9e-…` → `0f8c2d9e…`: the first 8 characters identify a session in a log, the rest stays out. */
export function shortenId(id: string): string {
  return id.length <= 8 ? id : `${id.slice(0, 8)}…`;
}

export interface LogRedactionOptions {
  maskPhoneNumbers: boolean;
  /** Literal secrets (API secret, webhook secrets, handle key): removed wherever they appear. */
  secrets: string[];
  /** API key and secret, to also remove the exact `Authorization: Basic` value they make. */
  credentials?: { apiKey: string; apiSecret: string };
}

/**
 * Turns a message and its context into one log line with no personal data or secret in the clear:
 * phone numbers masked (`+7******4567`), request ids and handles shortened, secrets and Basic headers
 * removed, in named fields and in free text alike (a last pass over the whole line).
 */
export class LogRedactor {
  readonly #secrets: string[];
  readonly #maskPhoneNumbers: boolean;

  constructor(options: LogRedactionOptions) {
    this.#maskPhoneNumbers = options.maskPhoneNumbers;
    const secrets = [...options.secrets];
    if (options.credentials) {
      const { apiKey, apiSecret } = options.credentials;
      secrets.push(Buffer.from(`${apiKey}:${apiSecret}`, 'utf8').toString('base64'));
    }
    for (const secret of options.secrets)
      if (secret.startsWith('whsec_')) secrets.push(secret.slice('whsec_'.length));
    // Longest first, so a secret that contains another is removed whole; very short strings are not
    // secrets worth matching (they would shred ordinary words).
    this.#secrets = [...new Set(secrets)].filter((s) => s.length >= 6).sort((a, b) => b.length - a.length);
  }

  /** `message key=value key=value`, redacted. */
  line(message: string, fields: LogFields = {}): string {
    const parts = [message];
    for (const [key, value] of Object.entries(fields)) {
      if (value === undefined) continue;
      parts.push(`${key}=${this.#formatValue(key, value)}`);
    }
    return this.scrub(parts.join(' '));
  }

  /** Removes secrets from any text; masks phone numbers and shortens request ids found in it. */
  scrub(text: string): string {
    let out = text;
    for (const secret of this.#secrets) out = out.split(secret).join(REDACTED);
    out = out.replace(BASIC_HEADER, `Basic ${REDACTED}`).replace(WEBHOOK_SECRET, `whsec_${REDACTED}`);
    out = out.replace(UUID_IN_TEXT, (id) => shortenId(id));
    if (this.#maskPhoneNumbers) out = out.replace(E164_IN_TEXT, (phone) => maskPhoneNumber(phone));
    return out;
  }

  #formatValue(key: string, value: Exclude<LogFieldValue, undefined>): string {
    let text = value === null ? 'null' : String(value);
    if (PHONE_KEYS.has(key) && this.#maskPhoneNumbers) text = maskPhoneNumber(text);
    else if (ID_KEYS.has(key)) text = shortenId(text);
    return /[\s="]/.test(text) || text === '' ? JSON.stringify(text) : text;
  }
}
