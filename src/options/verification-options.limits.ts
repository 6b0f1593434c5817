import { resolvePumpingOptions } from './pumping-options.js';
import type { LimitsOptions, ResolvedLimits, SpendCapOptions } from './verification.options.js';
import {
  bool,
  check,
  describe,
  fn,
  isObject,
  optional,
  positiveInt,
  rateLimit,
  VerificationOptionsError,
} from './verification-options.rules.js';

/**
 * The spend cap when `limits.spendCap` is not given: 1,000 RUB a UTC day, reserving 3 RUB (the
 * highest price the API documents) for a start whose price is not known.
 */
export const DEFAULT_SPEND_CAP: Readonly<Required<SpendCapOptions>> = {
  amount: 1000,
  windowMs: 86_400_000,
  currency: 'RUB',
  utcOffsetMinutes: 0,
  worstCasePrice: 3,
};

/** `limits`: every protection's defaults and checks (each one `false` switches it off). */
export function resolveLimits(input: unknown): ResolvedLimits {
  const limits = (input ?? {}) as LimitsOptions;
  if (!isObject(limits)) throw new VerificationOptionsError('limits', 'must be an object');
  optional('limits.enabled', limits.enabled, bool);
  optional('limits.coalesceStarts', limits.coalesceStarts, bool);
  if (limits.resendCooldownMs !== undefined && limits.resendCooldownMs !== false)
    check('limits.resendCooldownMs', limits.resendCooldownMs, positiveInt);
  optional('limits.key', limits.key, fn);
  optional('limits.beforeStart', limits.beforeStart, fn);
  optional('limits.ipv6PrefixLength', limits.ipv6PrefixLength, (v) =>
    Number.isInteger(v) && (v as number) >= 32 && (v as number) <= 128
      ? undefined
      : `must be a whole number of bits from 32 to 128 (got ${describe(v)})`,
  );
  let spendCap: ResolvedLimits['spendCap'] = false;
  if (limits.spendCap === undefined) spendCap = { ...DEFAULT_SPEND_CAP };
  else if (limits.spendCap !== false) {
    if (!isObject(limits.spendCap))
      throw new VerificationOptionsError('limits.spendCap', 'must be { amount, windowMs } or false');
    check('limits.spendCap.amount', limits.spendCap.amount, (v) =>
      typeof v === 'number' && Number.isFinite(v) && v > 0
        ? undefined
        : `must be a positive number (got ${describe(v)})`,
    );
    check('limits.spendCap.windowMs', limits.spendCap.windowMs, positiveInt);
    optional('limits.spendCap.utcOffsetMinutes', limits.spendCap.utcOffsetMinutes, (v) =>
      Number.isInteger(v) && (v as number) >= -720 && (v as number) <= 840
        ? undefined
        : `must be a whole number of minutes from -720 to 840 (got ${describe(v)})`,
    );
    optional('limits.spendCap.worstCasePrice', limits.spendCap.worstCasePrice, (v) =>
      typeof v === 'number' && Number.isFinite(v) && v > 0
        ? undefined
        : `must be a positive number (got ${describe(v)})`,
    );
    spendCap = {
      amount: limits.spendCap.amount,
      windowMs: limits.spendCap.windowMs,
      currency: limits.spendCap.currency ?? 'RUB',
      utcOffsetMinutes: limits.spendCap.utcOffsetMinutes ?? 0,
      worstCasePrice: limits.spendCap.worstCasePrice ?? DEFAULT_SPEND_CAP.worstCasePrice,
    };
  }
  const limitsEnabled = limits.enabled ?? true;
  return {
    enabled: limitsEnabled,
    startPerIp: limitsEnabled
      ? rateLimit('limits.startPerIp', limits.startPerIp, { points: 10, windowMs: 3_600_000 })
      : false,
    startPerPhone: limitsEnabled
      ? rateLimit('limits.startPerPhone', limits.startPerPhone, { points: 15, windowMs: 3_600_000 })
      : false,
    startPerPhoneAndCaller: limitsEnabled
      ? rateLimit('limits.startPerPhoneAndCaller', limits.startPerPhoneAndCaller, {
          points: 5,
          windowMs: 3_600_000,
        })
      : false,
    resendCooldownMs: limitsEnabled ? (limits.resendCooldownMs ?? 60_000) : false,
    checkPerIp: limitsEnabled
      ? rateLimit('limits.checkPerIp', limits.checkPerIp, { points: 30, windowMs: 600_000 })
      : false,
    wrongCodesPerPhone: limitsEnabled
      ? rateLimit('limits.wrongCodesPerPhone', limits.wrongCodesPerPhone, {
          points: 10,
          windowMs: 3_600_000,
        })
      : false,
    wrongCodesPerOwner: limitsEnabled
      ? rateLimit('limits.wrongCodesPerOwner', limits.wrongCodesPerOwner, {
          points: 10,
          windowMs: 3_600_000,
        })
      : false,
    coalesceStarts: limits.coalesceStarts ?? limitsEnabled,
    spendCap: limitsEnabled ? spendCap : false,
    pumping: resolvePumpingOptions(limits.pumping, limitsEnabled),
    key: limits.key,
    ipv6PrefixLength: limits.ipv6PrefixLength ?? 64,
    beforeStart: limits.beforeStart,
  };
}
