import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { VerificationClientError } from '../core/verification.errors.js';
import { RESOLVED_VERIFICATION_OPTIONS } from '../options/verification-options.tokens.js';
import type { ResolvedVerificationOptions } from '../options/verification.options.js';
import { VerificationService } from '../verification/verification.service.js';
import { VerifiedPhoneClaims } from './verified-phone-claims.js';
import { attachVerifiedPhone, type VerifiedPhoneDetails } from './verified-phone.request.js';

/** Metadata key of `@RequireVerifiedPhone({ within })`. */
export const VERIFIED_WITHIN_MS = 'nestjs-phone-verification:verified-within-ms';

/**
 * "Requires a verified phone" on the host's own routes (`@UseGuards(VerifiedPhoneGuard)`, or
 * `@RequireVerifiedPhone()`): lets the request through only when it carries a verification of this
 * owner that the API says is verified, or a valid signed claim of one (`verifiedPhone.claimHeader`).
 * The `verification_id` is read from `verifiedPhone.header`, else from the JSON body's
 * `verifiedPhone.bodyField`. Refusals are the package's HttpExceptions, for the host's filters:
 *
 * - 403 `phone_verification_required`: nothing presented, a forged or foreign id or claim (the same
 *   answer as an unknown one), or a verification older than the route's `within` (`reason: "stale"`);
 * - 409 `phone_not_verified`: the caller's verification is not verified (`verification_status` says
 *   where it stands: `sent`, `expired`, `failed`, `canceled`, …).
 *
 * Not a global guard: the module registers none. For GraphQL, extend it and override `getRequest`.
 */
@Injectable()
export class VerifiedPhoneGuard implements CanActivate {
  /** @internal Made by the module (dependency injection), never by a host. */
  constructor(
    @Inject(RESOLVED_VERIFICATION_OPTIONS) private readonly options: ResolvedVerificationOptions,
    private readonly verification: VerificationService,
    private readonly claims: VerifiedPhoneClaims,
    private readonly reflector: Reflector,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = this.getRequest(context);
    const owner = await this.owner(request);
    const claim = header(request, this.options.verifiedPhone.claimHeader);
    const details =
      claim === undefined ? await this.fromVerification(request, owner) : await this.fromClaim(claim, owner);
    const within = this.reflector.getAllAndOverride<number | undefined>(VERIFIED_WITHIN_MS, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (within !== undefined && this.options.clock() - details.verifiedAt.getTime() > within)
      throw required('The phone verification is too old for this action: verify again', 'stale');
    attachVerifiedPhone(request as object, details);
    return true;
  }

  /** The HTTP request (Express or Fastify). Override for other contexts (GraphQL: `GqlExecutionContext`). */
  protected getRequest(context: ExecutionContext): unknown {
    return context.switchToHttp().getRequest();
  }

  /** Who the caller is, from the module's `owner(req)`, as the client routes ask it. */
  protected async owner(request: unknown): Promise<string | undefined> {
    const owner = await this.options.owner?.(request);
    return owner === undefined || owner === null ? undefined : String(owner);
  }

  private async fromClaim(token: string, owner: string | undefined): Promise<VerifiedPhoneDetails> {
    const claim = await this.claims.read(token, owner);
    if (claim === null)
      throw required('The verified-phone claim is not valid for this caller', 'invalid_claim');
    return { ...claim, source: 'claim', claim: token };
  }

  private async fromVerification(request: unknown, owner: string | undefined): Promise<VerifiedPhoneDetails> {
    const { header: name, bodyField } = this.options.verifiedPhone;
    const verificationId = header(request, name) ?? bodyString(request, bodyField);
    if (verificationId === undefined) throw required('This action needs a verified phone number', 'missing');
    // The API is asked (the source of truth); a frontend's word is never taken.
    const phoneNumber = await this.verification.getVerifiedPhone(verificationId, owner);
    const status = await this.statusOf(verificationId, owner);
    if (phoneNumber === null || status.status !== 'verified')
      throw new VerificationClientError('phone_not_verified', 'The phone number is not verified', {
        verification_status: status.status,
      });
    const verifiedAt = status.verifiedAt ?? new Date(this.options.clock());
    const facts = { phoneNumber, owner, verifiedAt };
    return { ...facts, source: 'verification', verificationId, claim: await this.claims.issue(facts) };
  }

  /** The journey's status; an id that does not open for this owner is refused as if absent. */
  private async statusOf(verificationId: string, owner: string | undefined) {
    try {
      return await this.verification.status(verificationId, owner);
    } catch (error) {
      if (error instanceof VerificationClientError && error.errorCode === 'not_found')
        throw required('This action needs a verified phone number', 'unknown');
      throw error;
    }
  }
}

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
