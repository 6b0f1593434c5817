import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { SubjectIndex } from '../sessions/subject-index.js';
import { RESOLVED_VERIFICATION_OPTIONS } from '../options/verification-options.tokens.js';
import type { ResolvedVerificationOptions } from '../options/verification.options.js';
import { purposePolicy, type ResolvedPurposes } from '../options/purposes.options.js';

/**
 * What a signed claim says: this number was verified for this owner at `verifiedAt`, at the
 * registration (name and API key) that issued it.
 */
export interface VerifiedPhoneClaim {
  /** E.164. */
  phoneNumber: string;
  /** The `owner(req)` it was verified for (undefined without an owner resolver). */
  owner: string | undefined;
  verifiedAt: Date;
  /** A reviewer or demo number's (`testNumbers`). */
  test: boolean;
  /** When the claim stops being accepted (issued + its purpose's `claimTtlMs`, else `verifiedPhone.claimTtlMs`). */
  expiresAt: Date;
  /** What the verification was for (`purpose` on start); undefined: none named. */
  purpose?: string;
}

/** What a claim is made of. */
export type VerifiedPhoneFacts = Pick<
  VerifiedPhoneClaim,
  'phoneNumber' | 'owner' | 'verifiedAt' | 'purpose'
> & {
  /** Default false. */
  test?: boolean;
};

const PREFIX = 'vpc1';
const MAX_CLAIM_CHARS = 1024;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

interface ClaimBody {
  /** number */
  n: string;
  /** owner, or null */
  o: string | null;
  /** verified at, ms */
  va: number;
  /** expires at, ms */
  exp: number;
  /** audience: the issuing registration (a digest of its name and API key) */
  aud: string;
  /** a test number's */
  t: boolean;
  /** purpose, when one was named */
  p?: string;
}

/**
 * Short-lived signed claims of a verified phone, for step-up checks on the host's routes ("verified
 * within the last 10 minutes") without asking the API again: `vpc1.<body>.<HMAC-SHA256>`, the body
 * JSON in base64url (readable: it holds the caller's own number and nothing secret), the key derived
 * from the handle key (or the API secret) with HKDF under a label naming the registration (its name
 * and API key). A claim is accepted only by the registration it names (`aud`), for the owner it names
 * and until it expires; a forged, altered or foreign one reads as none.
 */
@Injectable()
export class VerifiedPhoneClaims {
  readonly #key: Buffer;
  readonly #audience: string;
  readonly #purposes: ResolvedPurposes;
  /** The module's clock (`clock` option). */
  readonly #now: () => number;

  readonly #erased: SubjectIndex;

  /** @internal Made by the module (dependency injection), never by a host. */
  constructor(
    @Inject(RESOLVED_VERIFICATION_OPTIONS) options: ResolvedVerificationOptions,
    erased: SubjectIndex,
  ) {
    this.#now = options.clock;
    this.#erased = erased;
    // One handleKey for two registrations (one environment variable) still gives each its own key.
    const registration = claimRegistration(options);
    this.#audience = options.dataKeys.digest(registration);
    this.#key = claimKey(options.handleKey, registration);
    this.#purposes = options.purposes;
  }

  /** A claim of `facts`, accepted from now for its purpose's `claimTtlMs` (else `verifiedPhone.claimTtlMs`). */
  async issue(facts: VerifiedPhoneFacts): Promise<string> {
    const body: ClaimBody = {
      n: facts.phoneNumber,
      o: facts.owner ?? null,
      va: facts.verifiedAt.getTime(),
      exp: this.#now() + purposePolicy(this.#purposes, facts.purpose).claimTtlMs,
      aud: this.#audience,
      t: facts.test === true,
      ...(facts.purpose === undefined ? {} : { p: facts.purpose }),
    };
    const encoded = Buffer.from(JSON.stringify(body), 'utf8').toString('base64url');
    return `${PREFIX}.${encoded}.${this.#mac(encoded)}`;
  }

  /** The claim, when `token` is one this key signed for `owner` and it has not expired; else null. */
  async read(token: unknown, owner: string | undefined): Promise<VerifiedPhoneClaim | null> {
    if (typeof token !== 'string' || token.length > MAX_CLAIM_CHARS) return null;
    const [prefix, encoded, mac, ...rest] = token.split('.');
    if (
      prefix !== PREFIX ||
      rest.length > 0 ||
      !encoded ||
      !mac ||
      !BASE64URL.test(encoded) ||
      !BASE64URL.test(mac)
    )
      return null;
    const expected = Buffer.from(this.#mac(encoded), 'base64url');
    const given = Buffer.from(mac, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
    const body = parseBody(encoded);
    if (body === null || body.aud !== this.#audience || body.o !== (owner ?? null) || body.exp <= this.#now())
      return null;
    // A subject erased since it verified (VerificationErasure): the claim no longer opens anything.
    const erasedAt = await this.#erased.forgottenAt(body.n, body.o ?? undefined);
    if (erasedAt !== undefined && body.va <= erasedAt) return null;
    return {
      phoneNumber: body.n,
      owner: body.o ?? undefined,
      verifiedAt: new Date(body.va),
      test: body.t,
      expiresAt: new Date(body.exp),
      ...(body.p === undefined ? {} : { purpose: body.p }),
    };
  }

  #mac(encoded: string): string {
    return claimMac(this.#key, encoded);
  }
}

/** @internal What names a registration in its claims' key and audience: its name and API key. */
export function claimRegistration(options: Pick<ResolvedVerificationOptions, 'name' | 'api'>): string {
  return `${options.name ?? ''}\n${options.api.apiKey}`;
}

/** @internal A registration's claim key: HKDF-SHA256 of the handle key (or API secret), labelled with it. */
export function claimKey(secret: string, registration: string): Buffer {
  return Buffer.from(
    hkdfSync('sha256', secret, 'nestjs-phone-verification', `verified-phone-claim-v2\n${registration}`, 32),
  );
}

/** @internal The MAC of a claim's encoded body under `key`. */
export function claimMac(key: Buffer, encoded: string): string {
  return createHmac('sha256', key).update(`${PREFIX}.${encoded}`).digest('base64url');
}

function parseBody(encoded: string): ClaimBody | null {
  try {
    const body = JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8')) as Partial<ClaimBody>;
    return typeof body.n === 'string' &&
      (typeof body.o === 'string' || body.o === null) &&
      Number.isFinite(body.va) &&
      Number.isFinite(body.exp) &&
      typeof body.aud === 'string' &&
      typeof body.t === 'boolean' &&
      (body.p === undefined || typeof body.p === 'string')
      ? (body as ClaimBody)
      : null;
  } catch {
    return null;
  }
}
