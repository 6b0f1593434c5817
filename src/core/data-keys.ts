import {
  createCipheriv,
  createDecipheriv,
  createHmac,
  createSecretKey,
  hkdfSync,
  randomBytes,
  type KeyObject,
} from 'node:crypto';

const SALT = 'nestjs-phone-verification';
/** A sealed value: this prefix, then base64url of IV (12 bytes), tag (16) and ciphertext. */
const SEALED = 'v1.';
const IV_BYTES = 12;
const TAG_BYTES = 16;

function derive(secret: string | Uint8Array, label: string): KeyObject {
  return createSecretKey(Buffer.from(hkdfSync('sha256', secret, SALT, label, 32)));
}

/**
 * The one holder of a registration's data key: what names a person in the store (a phone number, an
 * address, an owner, a client key) is kept as `digest` (HMAC-SHA-256 under a key derived from the
 * data key), and what must be read back (a session's number and owner, history entries) as `seal`
 * (AES-256-GCM under another derived key). Made once by the options resolver
 * (`ResolvedVerificationOptions.dataKeys`); every part asks it, none derives a key itself.
 *
 * The data key is the `dataKey` option, else derived from the API secret with HKDF under its own
 * label: never the secret itself, and not the handle key.
 */
export class DataKeys {
  readonly #digestKey: KeyObject;
  readonly #sealKey: KeyObject;

  /** `dataKey`: the option, or undefined to derive it from `apiSecret`. */
  constructor(dataKey: string | undefined, apiSecret: string) {
    const root = dataKey ?? Buffer.from(hkdfSync('sha256', apiSecret, SALT, 'data-key-v1', 32));
    this.#digestKey = derive(root, 'data-digest-v1');
    this.#sealKey = derive(root, 'data-seal-v1');
  }

  /** 128 bits of HMAC-SHA-256, base64url: short, key-safe, the same for the same value under one data key. */
  digest(value: string): string {
    return createHmac('sha256', this.#digestKey).update(value).digest('base64url').slice(0, 22);
  }

  /** `text` encrypted (AES-256-GCM, a random IV): readable back only under the same data key. */
  seal(text: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#sealKey, iv);
    const body = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
    return SEALED + Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
  }

  /** What `seal` sealed; null when `sealed` is not one of this key's (another key, tampered, not sealed). */
  open(sealed: string): string | null {
    if (!sealed.startsWith(SEALED)) return null;
    const bytes = Buffer.from(sealed.slice(SEALED.length), 'base64url');
    if (bytes.length < IV_BYTES + TAG_BYTES) return null;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.#sealKey, bytes.subarray(0, IV_BYTES));
      decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      const body = bytes.subarray(IV_BYTES + TAG_BYTES);
      return Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8');
    } catch {
      return null;
    }
  }
}
