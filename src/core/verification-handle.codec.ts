import { OldestFirst } from './oldest-first.js';
import {
  createCipheriv,
  createDecipheriv,
  createHmac,
  hkdfSync,
  type KeyObject,
  createSecretKey,
} from 'node:crypto';

import type { DeviceHint, JourneyStep } from './journey.js';

const VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const MAX_HANDLE_CHARS = 256;
/** A journey token: a few steps of a request id (a GUID), a method and a time each. */
const JOURNEY_VERSION = 2;
export const MAX_JOURNEY_TOKEN_CHARS = 2048;
const BASE64URL = /^[A-Za-z0-9_-]+$/;
/** How many opened handles are remembered: a page polls its handle every 1.5 to 2.5 s (bench/README.md, "status"). */
const RECENTLY_OPENED = 2_000;

/** What a journey token carries: enough to rebuild the journey record the store lost. */
export interface CarriedJourney {
  journeyId: string;
  steps: JourneyStep[];
  device?: DeviceHint;
}

type CarriedWire = { j: string; s: [string, string, number][]; d?: DeviceHint };

/**
 * The opaque `verification_id` a frontend holds: the upstream `request_id` sealed with
 * AES-256-GCM, bound to the owner as associated data. The frontend cannot read the request id,
 * and a forged, altered, truncated or foreign handle fails authentication, which the caller
 * answers exactly like an unknown id. Stateless: any instance with the same key opens it.
 *
 * Deterministic: the IV is an HMAC of the owner and the request id (the SIV idea), so one
 * verification has one `verification_id` string however often it is handed out (a resumed start
 * gives the frontend the string it already holds; events carry the same string). Two different
 * plaintexts never share an IV but by a 96-bit collision, which is what keeps GCM safe here; the
 * string reveals only that two handles are the same verification, which their holder knows anyway.
 */
export class VerificationHandleCodec {
  private readonly key: KeyObject;
  /** Derives each handle's IV from what it seals. */
  private readonly ivKey: KeyObject;
  /** (handle, owner) → request id, for handles this key opened lately; oldest first, bounded. */
  private readonly recentlyOpened = new Map<string, string>();
  private readonly oldestOpened = new OldestFirst(this.recentlyOpened);

  /**
   * `secret`: the handle key, or the API secret the key is derived from (HKDF-SHA256). `registration`:
   * a named registration's name, in the derivation's label, so that two registrations given one
   * handleKey (one environment variable) never open each other's handles, even on one API account.
   */
  constructor(secret: string, registration?: string) {
    const label = (info: string) => (registration === undefined ? info : `${info}\n${registration}`);
    const derived = hkdfSync(
      'sha256',
      secret,
      'nestjs-phone-verification',
      label('verification-handle-v1'),
      32,
    );
    this.key = createSecretKey(Buffer.from(derived));
    const ivInfo = label('verification-handle-iv-v1');
    const ivKey = hkdfSync('sha256', secret, 'nestjs-phone-verification', ivInfo, 32);
    this.ivKey = createSecretKey(Buffer.from(ivKey));
  }

  seal(requestId: string, owner: string | undefined): string {
    return this.sealText(VERSION, ownerData(owner), requestId);
  }

  /**
   * The `journey_token` of a journey of more than one step: its steps sealed for its owner, which a
   * frontend sends back so that a deployment whose store lost the journey (a restart on a
   * MemoryStore) rebuilds it. Deterministic like a handle: the same journey gives the same token.
   */
  sealJourney(journey: CarriedJourney, owner: string | undefined): string {
    const carried: CarriedWire = {
      j: journey.journeyId,
      s: journey.steps.map((step) => [step.requestId, step.method, step.startedAt]),
      ...(journey.device === undefined ? {} : { d: journey.device }),
    };
    return this.sealText(JOURNEY_VERSION, journeyData(owner), JSON.stringify(carried));
  }

  /** The journey a token carries, or null for anything that is not a token this key sealed for this owner. */
  openJourney(token: unknown, owner: string | undefined): CarriedJourney | null {
    if (typeof token !== 'string' || token.length > MAX_JOURNEY_TOKEN_CHARS || !BASE64URL.test(token))
      return null;
    const text = this.openText(JOURNEY_VERSION, journeyData(owner), token);
    if (text === null) return null;
    try {
      const wire = JSON.parse(text) as CarriedWire;
      return {
        journeyId: wire.j,
        steps: wire.s.map(([requestId, method, startedAt]) => ({ requestId, method, startedAt })),
        ...(wire.d === undefined ? {} : { device: wire.d }),
      };
    } catch {
      // Sealed by this key, so never malformed unless the format changed: treated as no token.
      return null;
    }
  }

  private sealText(version: number, aad: Buffer, text: string): string {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(aad.length);
    // Length-prefixed: no two (associated data, text) pairs feed the HMAC the same bytes.
    const iv = createHmac('sha256', this.ivKey)
      .update(length)
      .update(aad)
      .update(text, 'utf8')
      .digest()
      .subarray(0, IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(aad);
    const body = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
    return Buffer.concat([Buffer.of(version), iv, body, cipher.getAuthTag()]).toString('base64url');
  }

  /** The request id, or null for anything that is not a handle this key sealed for this owner. */
  open(handle: unknown, owner: string | undefined): string | null {
    if (typeof handle !== 'string' || handle.length > MAX_HANDLE_CHARS || !BASE64URL.test(handle))
      return null;
    // The owner is part of the key (a handle opens only for its owner); `\u0000` cannot occur in a handle.
    const remembered = owner === undefined ? handle : `${handle}\u0000${owner}`;
    const known = this.recentlyOpened.get(remembered);
    if (known !== undefined) return known;
    const requestId = this.openText(VERSION, ownerData(owner), handle);
    if (requestId !== null) {
      if (this.recentlyOpened.size >= RECENTLY_OPENED) this.oldestOpened.evict();
      this.recentlyOpened.set(remembered, requestId);
    }
    return requestId;
  }

  private openText(version: number, aad: Buffer, sealed: string): string | null {
    const bytes = Buffer.from(sealed, 'base64url');
    if (bytes.length < 1 + IV_BYTES + 1 + TAG_BYTES || bytes[0] !== version) return null;
    // Re-encoding must give the same text: rejects non-canonical spellings of the same bytes.
    if (bytes.toString('base64url') !== sealed) return null;
    const iv = bytes.subarray(1, 1 + IV_BYTES);
    const tag = bytes.subarray(bytes.length - TAG_BYTES);
    const body = bytes.subarray(1 + IV_BYTES, bytes.length - TAG_BYTES);
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, iv, { authTagLength: TAG_BYTES });
      decipher.setAAD(aad);
      decipher.setAuthTag(tag);
      return Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8');
    } catch {
      return null;
    }
  }
}

/** Tokens authenticate their kind too: a handle's bytes never open as a token, nor the reverse. */
function journeyData(owner: string | undefined): Buffer {
  return Buffer.concat([Buffer.of(JOURNEY_VERSION), ownerData(owner)]);
}

function ownerData(owner: string | undefined): Buffer {
  // A leading marker keeps "no owner" distinct from an owner that is the empty string.
  return owner === undefined ? Buffer.of(0) : Buffer.concat([Buffer.of(1), Buffer.from(owner, 'utf8')]);
}
