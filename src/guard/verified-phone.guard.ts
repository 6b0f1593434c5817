import { Inject, Injectable, Optional, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { VerificationClientError } from '../core/verification.errors.js';
import { clientIp } from '../core/client-request.js';
import { RESOLVED_VERIFICATION_OPTIONS } from '../options/verification-options.tokens.js';
import type { ResolvedVerificationOptions } from '../options/verification.options.js';
import { callerOwner } from '../options/host-request.js';
import { VerificationService } from '../verification/verification.service.js';
import { GuardReadMeter } from './guard-read-meter.js';
import { VerifiedPhoneClaims } from './verified-phone-claims.js';
import { attachVerifiedPhone, type VerifiedPhoneDetails } from './verified-phone.request.js';
import { PhoneVerificationError } from '../core/phone-verification.error.js';

/** Metadata key of `@RequireVerifiedPhone({ within })`. */
export const VERIFIED_WITHIN_MS = 'nestjs-phone-verification:verified-within-ms';
/** Metadata key of `@RequireVerifiedPhone({ allowTestNumbers: true })`. */
export const ALLOW_TEST_NUMBERS = 'nestjs-phone-verification:allow-test-numbers';

/** Metadata key of `@RequireVerifiedPhone({ purpose })`. */
export const REQUIRED_PURPOSE = 'nestjs-phone-verification:required-purpose';

/** The boot error of a guard placed where no registration's exports reach. */
export const GUARD_WITHOUT_REGISTRATION =
  'VerifiedPhoneGuard (@RequireVerifiedPhone()) is used in a module that sees no VerificationModule ' +
  'registration: import VerificationModule.forFeature(name) in that module (named registrations), ' +
  'or register the module with isGlobal: true';

/**
 * "Requires a verified phone" on the host's own routes (`@UseGuards(VerifiedPhoneGuard)`, or
 * `@RequireVerifiedPhone()`): lets the request through only when it carries a verification of this
 * owner that the API says is verified, or a valid signed claim of one (`verifiedPhone.claimHeader`).
 * The `verification_id` is read from `verifiedPhone.header`, else from the JSON body's
 * `verifiedPhone.bodyField`. Refusals are the package's HttpExceptions, for the host's filters:
 *
 * - 403 `phone_verification_required`: nothing presented, a forged or foreign id or claim (the same
 *   answer as an unknown one), a verification older than the route's `within` or of an unknown time
 *   there (`reason: "stale"`), a test number's on a route that did not opt in (`reason: "test_number"`);
 * - 409 `phone_not_verified`: the caller's verification is not verified (`verification_status` says
 *   where it stands: `sent`, `expired`, `failed`, `canceled`, …).
 *
 * Not a global guard: the module registers none. For GraphQL, extend it and override `getRequest`.
 */
@Injectable()
export class VerifiedPhoneGuard implements CanActivate {
  /**
   * @internal Made by the module (dependency injection), never by a host. Its dependencies are a
   * registration's exports; where none reaches, the boot fails with GUARD_WITHOUT_REGISTRATION.
   */
  constructor(
    @Optional() @Inject(RESOLVED_VERIFICATION_OPTIONS) private readonly options: ResolvedVerificationOptions,
    @Optional() private readonly verification: VerificationService,
    @Optional() private readonly claims: VerifiedPhoneClaims,
    private readonly reflector: Reflector,
    @Optional() private readonly meter: GuardReadMeter,
  ) {
    if (!options || !verification || !claims || !meter)
      throw new PhoneVerificationError(GUARD_WITHOUT_REGISTRATION);
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = this.getRequest(context);
    const owner = await this.owner(request);
    const claim = header(request, this.options.verifiedPhone.claimHeader);
    const found =
      claim === undefined ? await this.fromVerification(request, owner) : await this.fromClaim(claim, owner);
    const targets = [context.getHandler(), context.getClass()];
    if (found.test && this.reflector.getAllAndOverride<boolean>(ALLOW_TEST_NUMBERS, targets) !== true)
      throw required('This action does not take a test number', 'test_number');
    // The handler's purpose wins over its class's; a verification of another purpose (or none) is refused.
    const purpose = this.reflector.getAllAndOverride<string | undefined>(REQUIRED_PURPOSE, targets);
    if (purpose !== undefined && found.purpose !== purpose)
      throw required(`This action needs a phone verified for "${purpose}"`, 'purpose');
    const within = this.reflector.getAllAndOverride<number | undefined>(VERIFIED_WITHIN_MS, targets);
    // An unknown time is never taken as now: a route with an age limit refuses it.
    if (
      within !== undefined &&
      (found.timeKnown === false || this.options.clock() - found.verifiedAt.getTime() > within)
    )
      throw required('The phone verification is too old for this action: verify again', 'stale');
    const { timeKnown: _, ...details } = found;
    attachVerifiedPhone(request as object, details);
    return true;
  }

  /** The HTTP request (Express or Fastify). Override for other contexts (GraphQL: `GqlExecutionContext`). */
  protected getRequest(context: ExecutionContext): unknown {
    return context.switchToHttp().getRequest();
  }

  /** Who the caller is, from the module's `owner(req)`, as the client routes ask it. */
  protected owner(request: unknown): Promise<string | undefined> {
    return callerOwner(this.options.owner, request);
  }

  private async fromClaim(token: string, owner: string | undefined): Promise<Found> {
    const claim = await this.claims.read(token, owner);
    if (claim === null)
      throw required('The verified-phone claim is not valid for this caller', 'invalid_claim');
    return { ...claim, source: 'claim', claim: token };
  }

  private async fromVerification(request: unknown, owner: string | undefined): Promise<Found> {
    const { header: name, bodyField } = this.options.verifiedPhone;
    const verificationId = header(request, name) ?? bodyString(request, bodyField);
    if (verificationId === undefined) throw required('This action needs a verified phone number', 'missing');
    // The module's record of what the API said; a frontend's word is never taken.
    const facts = await this.factsOf(verificationId, owner, request);
    if (facts.phoneNumber === null || facts.status !== 'verified')
      throw new VerificationClientError('phone_not_verified', 'The phone number is not verified', {
        verification_status: facts.status,
      });
    // Unknown (a record of an older version): the claim states the epoch, which no `within` accepts.
    const verifiedAt = facts.verifiedAt ?? new Date(0);
    const claimed = {
      phoneNumber: facts.phoneNumber,
      owner,
      verifiedAt,
      test: facts.test,
      ...(facts.purpose === undefined ? {} : { purpose: facts.purpose }),
    };
    return {
      ...claimed,
      timeKnown: facts.verifiedAt !== null,
      source: 'verification',
      verificationId,
      claim: await this.claims.issue(claimed),
    };
  }

  /** What the module knows of the journey; an id that does not open for this owner is refused as if absent. */
  private async factsOf(verificationId: string, owner: string | undefined, request: unknown) {
    try {
      return await this.verification.verifiedFacts(verificationId, owner, (read) =>
        this.meter.take(owner, { request, ip: clientIp(request) }, read),
      );
    } catch (error) {
      if (error instanceof VerificationClientError && error.errorCode === 'not_found')
        throw required('This action needs a verified phone number', 'unknown');
      throw error;
    }
  }
}

/** What a source gave, and whether its time is known (a claim's always is). */
type Found = VerifiedPhoneDetails & { timeKnown?: boolean };

function required(detail: string, reason: string): VerificationClientError {
  return new VerificationClientError('phone_verification_required', detail, { reason });
}

function header(request: unknown, name: string): string | undefined {
  const headers = (request as { headers?: Record<string, string | string[] | undefined> } | undefined)
    ?.headers;
  const value = headers?.[name];
  const first = Array.isArray(value) ? value[0] : value;
  return typeof first === 'string' && first !== '' ? first : undefined;
}

function bodyString(request: unknown, field: string): string | undefined {
  const body = (request as { body?: unknown } | undefined)?.body;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const value = (body as Record<string, unknown>)[field];
  return typeof value === 'string' && value !== '' ? value : undefined;
}
