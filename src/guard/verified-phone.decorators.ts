import {
  applyDecorators,
  createParamDecorator,
  SetMetadata,
  UseGuards,
  type ExecutionContext,
  type Type,
} from '@nestjs/common';
import { PURPOSE_PATTERN } from '../options/purposes.options.js';
import {
  ALLOW_TEST_NUMBERS,
  REQUIRED_PURPOSE,
  VERIFIED_WITHIN_MS,
  VerifiedPhoneGuard,
} from './verified-phone.guard.js';
import { verifiedPhoneOf, type VerifiedPhoneDetails } from './verified-phone.request.js';
import { ArgumentTypeError, PhoneVerificationError } from '../core/phone-verification.error.js';

export interface RequireVerifiedPhoneOptions {
  /** The verification (or claim) must be at most this old, ms: a step-up check ("within 10 minutes"). */
  within?: number;
  /**
   * Let reviewer and demo numbers' verifications (`testNumbers`) through. Default false: a guarded
   * route refuses them (403 `phone_verification_required`, `reason: "test_number"`).
   */
  allowTestNumbers?: boolean;
  /**
   * The purpose the verification must have been started for (`purpose` on start): a verification or
   * claim of another purpose, or of none, is refused (403 `phone_verification_required`,
   * `reason: "purpose"`). A handler's purpose wins over its class's.
   */
  purpose?: string;
  /** The guard to apply: a subclass of VerifiedPhoneGuard for other contexts (GraphQL). Default VerifiedPhoneGuard. */
  guard?: Type<VerifiedPhoneGuard>;
}

/**
 * `@UseGuards(VerifiedPhoneGuard)` on a host's route or controller, with an optional age limit of the
 * verification. The handler reads the number with `@VerifiedPhone()`.
 */
export function RequireVerifiedPhone(
  options: RequireVerifiedPhoneOptions = {},
): MethodDecorator & ClassDecorator {
  if (options.within !== undefined && !(Number.isInteger(options.within) && options.within > 0))
    throw new ArgumentTypeError('RequireVerifiedPhone: "within" must be a positive integer of ms');
  if (options.allowTestNumbers !== undefined && typeof options.allowTestNumbers !== 'boolean')
    throw new ArgumentTypeError('RequireVerifiedPhone: "allowTestNumbers" must be a boolean');
  if (
    options.purpose !== undefined &&
    !(typeof options.purpose === 'string' && PURPOSE_PATTERN.test(options.purpose))
  )
    throw new ArgumentTypeError('RequireVerifiedPhone: "purpose" must be a purpose name like "step_up"');
  return applyDecorators(
    ...(options.purpose === undefined ? [] : [SetMetadata(REQUIRED_PURPOSE, options.purpose)]),
    ...(options.within === undefined ? [] : [SetMetadata(VERIFIED_WITHIN_MS, options.within)]),
    ...(options.allowTestNumbers === undefined
      ? []
      : [SetMetadata(ALLOW_TEST_NUMBERS, options.allowTestNumbers)]),
    UseGuards(options.guard ?? VerifiedPhoneGuard),
  );
}

/**
 * The verified number (E.164) VerifiedPhoneGuard let the request through with; `@VerifiedPhone('details')`
 * gives all it found (verified at, owner, source, the signed claim to hand to the frontend). Throws
 * when the guard did not run on the route: a route that reads a verified number must be guarded.
 */
export const VerifiedPhone = createParamDecorator(
  (data: 'phoneNumber' | 'details' | undefined, context: ExecutionContext): string | VerifiedPhoneDetails => {
    const details = verifiedPhoneOf(context.switchToHttp().getRequest());
    if (details === undefined)
      throw new PhoneVerificationError(
        '@VerifiedPhone() needs VerifiedPhoneGuard on the route (@RequireVerifiedPhone())',
      );
    return data === 'details' ? details : details.phoneNumber;
  },
);
