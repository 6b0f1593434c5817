import { VerificationOptionsError } from './verification.options.js';

/** Numbers, ranges and owners the pumping defence never holds (nor counts). */
export interface PumpingSafeList {
  /** E.164 numbers (`+79161234567`). */
  numbers?: string[];
  /** Ranges as the defence writes them: the E.164 number without its last `rangeDigits` digits (`+7916123`). */
  ranges?: string[];
  /** Values of `owner(req)`. */
  owners?: string[];
}

/**
 * The pumping defence (`limits.pumping`): starts and verifications counted per number range, per
 * country and per caller (owner, client key, IPv6 network), in the store; a subject whose starts do
 * not convert into verifications is held. See README "Pumping defence" for what each costs.
 */
export interface PumpingOptions {
  /** `'enforce'` refuses held starts; `'monitor'` only logs, counts and emits; `'off'`. Default `'enforce'`. */
  mode?: 'enforce' | 'monitor' | 'off';
  /** Digits dropped from the end of an E.164 number to name its range. Default 4 (10,000 numbers); 1 to 8. */
  rangeDigits?: number;
  /** Length of the sliding window counts are kept over, ms. Default 3,600,000 (an hour). */
  windowMs?: number;
  /** Unconverted starts a range takes in the window before it is held. Default 20. */
  rangeMinStarts?: number;
  /** Unconverted starts an owner, a client key or an IPv6 network takes in the window before it is held. Default 20. */
  callerMinStarts?: number;
  /** Unconverted starts in one country's window that mean it is under attack. Default 20. */
  countryMinStarts?: number;
  /**
   * While its country is under attack, the unconverted starts a range or caller without a record of
   * completed verifications takes before it is held. Default 1.
   */
  underAttackMinStarts?: number;
  /** Share of starts that must complete (verified / starts) for a subject not to be held. Default 0.2. */
  minConversion?: number;
  /**
   * A range or country is held only when its starts in the window pass this many times its average
   * window of the previous day (its normal rate). Default 3.
   */
  surgeFactor?: number;
  /** First cool-off of a hold, ms; doubled for each hold that follows while the pattern continues. Default 900,000. */
  holdMs?: number;
  /** Longest cool-off, ms. Default 86,400,000. */
  maxHoldMs?: number;
  /**
   * Share of the spend cap kept for callers and ranges with a record of completed verifications
   * while their country is under attack. Default 0.2 (past 80 % of the cap, unknown starts wait). 0 turns it off.
   */
  reserveShare?: number;
  /**
   * How long a completed verification makes its range and callers known, ms (one store entry each).
   * Default 86,400,000: a day, the default spend cap's window.
   */
  recordTtlMs?: number;
  safeList?: PumpingSafeList;
}

export interface ResolvedPumping {
  mode: 'enforce' | 'monitor' | 'off';
  rangeDigits: number;
  windowMs: number;
  rangeMinStarts: number;
  callerMinStarts: number;
  countryMinStarts: number;
  underAttackMinStarts: number;
  minConversion: number;
  surgeFactor: number;
  holdMs: number;
  maxHoldMs: number;
  reserveShare: number;
  recordTtlMs: number;
  safeList: { numbers: string[]; ranges: string[]; owners: string[] };
}

export const DEFAULT_PUMPING: Readonly<ResolvedPumping> = {
  mode: 'enforce',
  rangeDigits: 4,
  windowMs: 3_600_000,
  rangeMinStarts: 20,
  callerMinStarts: 20,
  countryMinStarts: 20,
  underAttackMinStarts: 1,
  minConversion: 0.2,
  surgeFactor: 3,
  holdMs: 900_000,
  maxHoldMs: 86_400_000,
  reserveShare: 0.2,
  recordTtlMs: 86_400_000,
  safeList: { numbers: [], ranges: [], owners: [] },
};

const INTEGER_FIELDS = [
  'windowMs',
  'rangeMinStarts',
  'callerMinStarts',
  'countryMinStarts',
  'underAttackMinStarts',
  'holdMs',
  'maxHoldMs',
  'recordTtlMs',
] as const;

/** `limits.pumping` with defaults applied; throws VerificationOptionsError naming the field. */
export function resolvePumpingOptions(value: unknown, limitsEnabled: boolean): ResolvedPumping {
  const field = 'limits.pumping';
  if (value === undefined)
    return { ...DEFAULT_PUMPING, mode: limitsEnabled ? 'enforce' : 'off', safeList: emptySafeList() };
  if (value === false) return { ...DEFAULT_PUMPING, mode: 'off', safeList: emptySafeList() };
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new VerificationOptionsError(field, 'must be an object ({ mode, rangeDigits, … }) or false');
  const input = value as PumpingOptions;
  const resolved: ResolvedPumping = { ...DEFAULT_PUMPING, safeList: emptySafeList() };
  if (input.mode !== undefined) {
    if (input.mode !== 'enforce' && input.mode !== 'monitor' && input.mode !== 'off')
      throw new VerificationOptionsError(
        `${field}.mode`,
        `must be "enforce", "monitor" or "off" (got ${describe(input.mode)})`,
      );
    resolved.mode = input.mode;
  } else if (!limitsEnabled) resolved.mode = 'off';
  if (input.rangeDigits !== undefined) {
    if (!Number.isInteger(input.rangeDigits) || input.rangeDigits < 1 || input.rangeDigits > 8)
      throw new VerificationOptionsError(
        `${field}.rangeDigits`,
        `must be a whole number of digits from 1 to 8 (got ${describe(input.rangeDigits)})`,
      );
    resolved.rangeDigits = input.rangeDigits;
  }
  for (const name of INTEGER_FIELDS) {
    const v = input[name];
    if (v === undefined) continue;
    if (!Number.isInteger(v) || v <= 0)
      throw new VerificationOptionsError(
        `${field}.${name}`,
        `must be a positive integer (got ${describe(v)})`,
      );
    resolved[name] = v;
  }
  if (resolved.maxHoldMs < resolved.holdMs)
    throw new VerificationOptionsError(`${field}.maxHoldMs`, 'must be at least holdMs');
  for (const name of ['minConversion', 'reserveShare'] as const) {
    const v = input[name];
    if (v === undefined) continue;
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || v >= 1)
      throw new VerificationOptionsError(
        `${field}.${name}`,
        `must be a share from 0 to below 1 (got ${describe(v)})`,
      );
    resolved[name] = v;
  }
  if (input.surgeFactor !== undefined) {
    const v = input.surgeFactor;
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 1)
      throw new VerificationOptionsError(
        `${field}.surgeFactor`,
        `must be a number of at least 1 (got ${describe(v)})`,
      );
    resolved.surgeFactor = v;
  }
  resolved.safeList = resolveSafeList(input.safeList);
  return resolved;
}

function resolveSafeList(value: unknown): ResolvedPumping['safeList'] {
  const field = 'limits.pumping.safeList';
  if (value === undefined) return emptySafeList();
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new VerificationOptionsError(field, 'must be { numbers?, ranges?, owners? }');
  const list = value as PumpingSafeList;
  const entries = (name: keyof PumpingSafeList, pattern: RegExp, shape: string): string[] => {
    const items = list[name];
    if (items === undefined) return [];
    if (!Array.isArray(items)) throw new VerificationOptionsError(`${field}.${name}`, 'must be an array');
    items.forEach((item, i) => {
      if (typeof item !== 'string' || !pattern.test(item))
        throw new VerificationOptionsError(
          `${field}.${name}[${i}]`,
          `must be ${shape} (got ${describe(item)})`,
        );
    });
    return [...items];
  };
  return {
    numbers: entries('numbers', /^\+[1-9]\d{6,14}$/, 'an E.164 number like "+79161234567"'),
    ranges: entries('ranges', /^\+[1-9]\d{0,13}$/, 'a range like "+7916123" (E.164 without its last digits)'),
    owners: entries('owners', /^.{1,200}$/s, 'a non-empty owner id'),
  };
}

function emptySafeList(): ResolvedPumping['safeList'] {
  return { numbers: [], ranges: [], owners: [] };
}

function describe(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v);
  if (Array.isArray(v)) return 'an array';
  if (v === null) return 'null';
  return typeof v === 'object' ? 'an object' : String(v);
}
