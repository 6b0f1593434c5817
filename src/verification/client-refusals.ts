import type { KnownVerificationMethod } from '../api/api.types.js';
import { normalizeMethod } from '../api/method-names.js';
import { isDeviceHint, type DeviceHint, type SwitchRefusal } from '../core/journey.js';
import { VerificationClientError } from '../core/verification.errors.js';
import { isAcceptedPurpose, PURPOSE_PATTERN, type ResolvedPurposes } from '../options/purposes.options.js';

/** Retry-After of `switch_in_progress`: the other switch's answer is a moment away. */
const SWITCH_RETRY_AFTER_SECONDS = 1;

/**
 * The method among `offered` (the deployment's candidates, then the effective list), or 400
 * method_not_available listing `available` (`msgr1`, the schema's name, is `msgr1_otp`).
 */
export function offeredMethod(
  method: unknown,
  offered: readonly KnownVerificationMethod[],
  available: readonly KnownVerificationMethod[],
): KnownVerificationMethod {
  if (typeof method !== 'string') throw fieldError('method', 'method must be a string');
  const canonical = normalizeMethod(method);
  const found = offered.includes(canonical as KnownVerificationMethod)
    ? (canonical as KnownVerificationMethod)
    : undefined;
  if (!found)
    throw new VerificationClientError(
      'method_not_available',
      `Method "${method.slice(0, 40)}" is not offered here`,
      {
        available_methods: available,
      },
    );
  return found;
}

export function fieldError(field: string, message: string): VerificationClientError {
  return new VerificationClientError('validation_error', message, { errors: [{ field, message }] });
}

export function notPending(status: string): VerificationClientError {
  return new VerificationClientError('not_pending', `The verification is ${status}`, {
    verification_status: status,
  });
}

/** A start's `device`: absent, or `mobile` / `desktop` (400 validation_error otherwise). */
export function deviceHint(device: unknown): DeviceHint | undefined {
  if (device === undefined) return undefined;
  if (!isDeviceHint(device)) throw fieldError('device', 'device must be "mobile" or "desktop"');
  return device;
}

/**
 * A start's `purpose`: absent, or one this registration accepts (built in, or declared in `purposes`).
 * Not a purpose's name: 400 `validation_error`; a name not accepted here: 400 `purpose_not_allowed`.
 */
export function startPurpose(purpose: unknown, purposes: ResolvedPurposes): string | undefined {
  if (purpose === undefined) return undefined;
  if (typeof purpose !== 'string' || !PURPOSE_PATTERN.test(purpose))
    throw fieldError(
      'purpose',
      'purpose must be a purpose name (lower-case letters, digits, _ or -, at most 32)',
    );
  if (!isAcceptedPurpose(purposes, purpose))
    throw new VerificationClientError('purpose_not_allowed', `Purpose "${purpose}" is not accepted here`, {
      purpose,
    });
  return purpose;
}

/** 400 `method_not_available` of a start whose purpose allows none of the methods offered here. */
export function noMethodForPurpose(purpose: string | undefined): VerificationClientError {
  return new VerificationClientError(
    'method_not_available',
    purpose === undefined
      ? 'No method is offered here'
      : `No method is offered here for purpose "${purpose}"`,
    { available_methods: [], ...(purpose === undefined ? {} : { purpose }) },
  );
}

/** 409 `switch_in_progress`: another switch (or cancel) of the journey holds its next step. */
export function switchInProgress(): VerificationClientError {
  return new VerificationClientError(
    'switch_in_progress',
    'Another switch of this verification is under way',
    {},
    SWITCH_RETRY_AFTER_SECONDS,
  );
}

/**
 * A switch refused by the journey's rules, as the frontend is told it (`named`: the method the
 * caller asked for; `now`: the module's clock, for `Retry-After`).
 */
export function switchRefusal(
  refusal: SwitchRefusal,
  named: string | undefined,
  now: number,
): VerificationClientError {
  switch (refusal.code) {
    case 'not_pending':
      return notPending(refusal.status);
    case 'method_not_available':
      return new VerificationClientError(
        'method_not_available',
        `Method "${(named ?? '').slice(0, 40)}" cannot be switched to here`,
        { available_methods: refusal.available },
      );
    case 'journey_limit_reached':
      return new VerificationClientError('journey_limit_reached', LIMIT_DETAILS[refusal.limit], {
        limit: refusal.limit,
      });
    case 'fallback_not_available': {
      const waitMs = Math.max(0, refusal.availableAt - now);
      return new VerificationClientError(
        'fallback_not_available',
        'Another method can be offered once this one had its time',
        { fallback_available_at: new Date(refusal.availableAt).toISOString() },
        Math.max(1, Math.ceil(waitMs / 1000)),
      );
    }
  }
}

const LIMIT_DETAILS: Record<Extract<SwitchRefusal, { code: 'journey_limit_reached' }>['limit'], string> = {
  max_steps: 'This verification has tried as many methods as it may',
  max_cost: 'Another method would cost this verification more than it may',
  methods: 'No other method is left for this verification',
};
