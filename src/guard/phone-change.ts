import { Inject, Injectable, Optional } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { clientIp } from '../core/client-request.js';
import { MAX_SESSION_TTL_MS } from '../core/session-record.js';
import { maskPhoneNumber } from '../core/phone-mask.js';
import { PhoneVerificationError } from '../core/phone-verification.error.js';
import { PhoneChangeEventName, type PhoneChangedEvent } from '../core/verification-events.js';
import { asVerificationError, VerificationClientError } from '../core/verification.errors.js';
import { VerificationTelemetry } from '../observability/verification-telemetry.js';
import { longestClaimTtlMs, purposePolicy } from '../options/purposes.options.js';
import { RESOLVED_VERIFICATION_OPTIONS } from '../options/verification-options.tokens.js';
import type { ResolvedVerificationOptions } from '../options/verification.options.js';
import { RECORD_RETENTION_MS } from '../sessions/session-record.repository.js';
import { SubjectIndex } from '../sessions/subject-index.js';
import { VerificationStore } from '../store/verification-store.interface.js';
import { VerificationService } from '../verification/verification.service.js';
import { GuardReadMeter } from './guard-read-meter.js';
import type { UpstreamRead } from '../protection/status-read-meter.js';
import { ProtectionKeys } from '../protection/protection-keys.js';
import { VerifiedPhoneClaims } from './verified-phone-claims.js';

/** What the host's `rebind` is given: the owner, the number the account had and the one it moves to. */
export interface PhoneChangeFacts {
  /** The `owner(req)` whose number changes. */
  owner: string;
  /** The number the account has (as you passed it), E.164; null when it has none. */
  oldPhoneNumber: string | null;
  /** The new number, E.164, as the API verified it for this owner (`purpose: 'change_phone'`). */
  newPhoneNumber: string;
  /** When the new number was verified. */
  verifiedAt: Date;
}

/** One change of an owner's number, as the host's route asks for it. */
export interface PhoneChangeRequest {
  /** The caller's HTTP request (Express or Fastify): the owner is the module's `owner(req)`, as on the client routes. */
  request: unknown;
  /** The new number's `verification_id`, started with `purpose: 'change_phone'` by this owner. */
  verificationId: string;
  /** The owner's number now (E.164), from your user table; null when the account has none. */
  currentPhoneNumber: string | null;
  /**
   * A `verification_id` or claim (`vpc1.…`) of the current number, this owner's, `purpose`
   * `change_phone` or `step_up`: required with `phoneChange.confirmOld`, checked whenever given.
   */
  oldConfirmation?: string;
  /**
   * Moves the account to the new number in your store, atomically (a transaction that updates the row
   * only while it still holds `oldPhoneNumber`). Answer `'taken'` when the number is another account's:
   * the caller gets the same answer as a change, nothing is rebound and no event says it changed.
   * Throw, and nothing of the change stays: no cooldown, no revocation (your error comes back as it is).
   */
  rebind(change: PhoneChangeFacts): Promise<void | 'taken'>;
}

/** The answer of a change, the same whether the number was bound or is another account's. */
export interface PhoneChangeResult {
  /** When the change was made (the module's clock). */
  changedAt: Date;
  /** When the owner may change the number again (`phoneChange.cooldownMs`). */
  nextChangeAt: Date;
}

const E164 = /^\+[1-9]\d{6,14}$/;
/** The purposes a confirmation from the old number may have been verified for. */
const CONFIRMING_PURPOSES: readonly (string | undefined)[] = ['change_phone', 'step_up'];
/** A revocation outlives every claim and every record of what was verified before it. */
const REVOKED_SLACK_MS = 60_000;

/**
 * A change of a signed-in owner's number, for the host's own route (behind its auth guard, and its
 * step-up guard when it wants one: `@RequireVerifiedPhone({ purpose: 'step_up' })`). The new number
 * must be verified by this owner for `change_phone`, within that purpose's claim lifetime and not
 * before the number last left the account; optionally the current number too (`confirmOld`). One
 * change per owner per `phoneChange.cooldownMs`, across instances (a set-if-absent in the store, so
 * two racing changes make one). The host's `rebind` moves the account; once it did, what the owner
 * verified of the old number no longer counts (its claims and verifications at the guard and
 * `getVerifiedPhone`), and `verification.phone_changed` tells the host to notify the old number.
 * Refusals are the package's `VerificationClientError`s; the module never writes the host's users.
 */
@Injectable()
export class PhoneChange {
  /** @internal Made by the module (dependency injection), never by a host. */
  constructor(
    @Inject(RESOLVED_VERIFICATION_OPTIONS) private readonly options: ResolvedVerificationOptions,
    @Inject(VerificationStore) private readonly store: VerificationStore,
    private readonly verification: VerificationService,
    private readonly claims: VerifiedPhoneClaims,
    private readonly subjects: SubjectIndex,
    private readonly meter: GuardReadMeter,
    private readonly telemetry: VerificationTelemetry,
    @Optional() private readonly emitter?: EventEmitter2,
  ) {}

  /** Changes the owner's number (see the class); answers when, and when the next change may be. */
  async change(input: PhoneChangeRequest): Promise<PhoneChangeResult> {
    checkInput(input);
    const owner = await this.owner(input.request);
    const cooldownKey = ProtectionKeys.phoneChangeCooldown(this.options.dataKeys, owner);
    try {
      await this.refuseInCooldown(cooldownKey);
      const next = await this.newNumber(input, owner);
      if (this.options.phoneChange.confirmOld || input.oldConfirmation !== undefined)
        await this.confirmOld(input, owner);
      // One change at a time per owner, across instances: the cooldown is taken before the rebind.
      const now = this.store.now();
      if (!(await this.store.setIfAbsent(cooldownKey, String(now), this.options.phoneChange.cooldownMs)))
        await this.refuseInCooldown(cooldownKey, true);
      const facts = {
        owner,
        oldPhoneNumber: input.currentPhoneNumber,
        newPhoneNumber: next.phoneNumber,
        verifiedAt: next.verifiedAt,
      };
      // The number the account already holds answers as a change (cooldown taken, no rebind, no event),
      // as a number another account holds does: a retry never tells which it was.
      const outcome =
        next.phoneNumber === input.currentPhoneNumber
          ? 'taken'
          : await this.rebind(input, facts, cooldownKey, now);
      if (outcome !== 'taken') await this.announce(facts, now);
      return { changedAt: new Date(now), nextChangeAt: new Date(now + this.options.phoneChange.cooldownMs) };
    } catch (error) {
      throw error instanceof HostError ? error.error : asVerificationError(error);
    }
  }

  /**
   * The old number leaves the account before the host's rebind (what was verified of it is refused
   * meanwhile) and comes back when the rebind fails, with the cooldown: nothing half-done. A number
   * another account holds (`taken`) is treated as moved: the caller sees no difference.
   */
  private async rebind(
    input: PhoneChangeRequest,
    facts: PhoneChangeFacts,
    cooldownKey: string,
    now: number,
  ): Promise<void | 'taken'> {
    const undo =
      facts.oldPhoneNumber === null
        ? undefined
        : await this.subjects.revoke(facts.owner, facts.oldPhoneNumber, now, this.revokedMs());
    try {
      return await input.rebind(facts);
    } catch (error) {
      // Only while this change still holds the cooldown: a rebind that failed after it lapsed must not
      // undo a later change (its revocation, its cooldown); the old number then stays revoked (safe).
      if ((await this.store.get(cooldownKey)) === String(now)) {
        await undo?.();
        await this.store.delete(cooldownKey);
      }
      throw new HostError(error);
    }
  }

  /** The new number's verification: this owner's, verified for `change_phone`, fresh, no test number. */
  private async newNumber(input: PhoneChangeRequest, owner: string) {
    const facts = await this.verification.verifiedFacts(input.verificationId, owner, (read) =>
      this.mayRead(input, owner, read),
    );
    if (facts.phoneNumber === null || facts.status !== 'verified')
      throw new VerificationClientError('phone_not_verified', 'The new phone number is not verified', {
        verification_status: facts.status,
      });
    if (facts.test) throw required('A test number cannot become an account’s number', 'test_number');
    if (facts.purpose !== 'change_phone')
      throw required('The new number must be verified for "change_phone"', 'purpose');
    if (facts.verifiedAt === null || !this.fresh(facts.verifiedAt.getTime()))
      throw required('The new number’s verification is too old: verify it again', 'stale');
    return { phoneNumber: facts.phoneNumber, verifiedAt: facts.verifiedAt };
  }

  /** The current number's confirmation: a verification or claim of it, this owner's, recent, of a confirming purpose. */
  private async confirmOld(input: PhoneChangeRequest, owner: string): Promise<void> {
    if (input.currentPhoneNumber === null) return;
    const proof = input.oldConfirmation;
    const refused = () => required('Confirm the change from the current number first', 'old_number');
    if (typeof proof !== 'string' || proof === '') throw refused();
    const found = proof.startsWith('vpc1.')
      ? await this.claims.read(proof, owner)
      : await this.verification
          .verifiedFacts(proof, owner, (read) => this.mayRead(input, owner, read))
          .catch((error: unknown) => {
            if (error instanceof VerificationClientError && error.errorCode === 'not_found') return null;
            throw error;
          });
    if (
      found === null ||
      found.phoneNumber !== input.currentPhoneNumber ||
      found.test ||
      !CONFIRMING_PURPOSES.includes(found.purpose) ||
      found.verifiedAt === null ||
      !this.fresh(found.verifiedAt.getTime())
    )
      throw refused();
  }

  /** An upstream read for this change, on the caller's guard meter (as VerifiedPhoneGuard's). */
  private mayRead(input: PhoneChangeRequest, owner: string, read: UpstreamRead): Promise<boolean> {
    return this.meter.take(owner, { request: input.request, ip: clientIp(input.request) }, read);
  }

  /** 429 while the owner's last change (or one in progress) holds the cooldown. */
  private async refuseInCooldown(key: string, held = false): Promise<void> {
    const since = await this.store.get(key);
    if (since === null && !held) return;
    const left = Number(since ?? this.store.now()) + this.options.phoneChange.cooldownMs - this.store.now();
    throw new VerificationClientError(
      'rate_limit_exceeded',
      'The phone number was changed recently: try again later',
      { reason: 'phone_change_cooldown' },
      Math.max(1, Math.ceil(left / 1000)),
    );
  }

  /** Verified within the `change_phone` purpose's claim lifetime. */
  private fresh(verifiedAt: number): boolean {
    return this.store.now() - verifiedAt <= purposePolicy(this.options.purposes, 'change_phone').claimTtlMs;
  }

  /** How long a revocation is kept: past the longest claim and the longest record of a verification before it. */
  private revokedMs(): number {
    const claims = longestClaimTtlMs(this.options.purposes);
    return Math.max(claims, MAX_SESSION_TTL_MS + RECORD_RETENTION_MS) + REVOKED_SLACK_MS;
  }

  private async announce(facts: PhoneChangeFacts, at: number): Promise<void> {
    if (!this.emitter) return;
    const event: PhoneChangedEvent = {
      event: PhoneChangeEventName.phoneChanged,
      owner: facts.owner,
      oldPhoneNumberMasked: facts.oldPhoneNumber === null ? null : maskPhoneNumber(facts.oldPhoneNumber),
      newPhoneNumberMasked: maskPhoneNumber(facts.newPhoneNumber),
      changedAt: new Date(at),
      ...(this.options.name === undefined ? {} : { registration: this.options.name }),
    };
    try {
      await this.emitter.emitAsync(event.event, event);
    } catch (error) {
      // The change stands (the host's store has it): a listener's failure is logged, by name only.
      this.telemetry.logger.warn('a listener of verification.phone_changed failed', {
        error: error instanceof Error ? error.name : 'unknown',
      });
    }
  }

  /** The caller, from the module's `owner(req)`; a change needs one (none: as a verification of nobody's, 404). */
  private async owner(request: unknown): Promise<string> {
    const owner = await this.options.owner?.(request);
    if (owner === undefined || owner === null || String(owner) === '')
      throw new VerificationClientError('not_found');
    return String(owner);
  }
}

/** The host's own error from `rebind`, handed back as it is. */
class HostError {
  constructor(readonly error: unknown) {}
}

function checkInput(input: PhoneChangeRequest): void {
  if (typeof input?.rebind !== 'function')
    throw new PhoneVerificationError('PhoneChange.change: "rebind" must be a function');
  const current = input.currentPhoneNumber;
  if (current !== null && !(typeof current === 'string' && E164.test(current)))
    throw new PhoneVerificationError('PhoneChange.change: "currentPhoneNumber" must be E.164 or null');
  if (typeof input.verificationId !== 'string' || input.verificationId === '')
    throw invalid('verificationId', 'the new number’s verification_id is required');
}

function required(detail: string, reason: string): VerificationClientError {
  return new VerificationClientError('phone_verification_required', detail, { reason });
}

function invalid(field: string, message: string): VerificationClientError {
  return new VerificationClientError('validation_error', message, { errors: [{ field, message }] });
}
