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
  /**
   * Graded answers: a suspected start (held range, prefix or caller; the reserve; the spend cap's
   * last share) is offered only the methods charged on proof (reverse_flash_call, msgr2_bot) that
   * the account offers: `auto` picks among them, an explicit other method gets 409 `method_held`
   * with `offered_methods` and `Retry-After`. Refused as before when none is offered. Default true.
   */
  grading?: boolean;
  /** Digits dropped from the end of an E.164 number to name its range. Default 4 (10,000 numbers); 1 to 8. */
  rangeDigits?: number;
  /** Length of the sliding window counts are kept over, ms. Default 3,600,000 (an hour). */
  windowMs?: number;
  /** Unconverted starts a range with a history (numbers verified in it) takes in the window before it is held. Default 20. */
  rangeMinStarts?: number;
  /**
   * Unconverted starts an operator prefix (calling code and national destination code, `+7985`)
   * with a history takes in the window before it is held. Default 20.
   */
  prefixMinStarts?: number;
  /**
   * Unconverted starts a range without a history (no number verified in it yesterday or in the
   * window) takes before it is held: a burst into numbers nobody verified is an attack's signature. Default 3.
   */
  freshRangeMinStarts?: number;
  /** The same for an operator prefix without a history. Default 10. */
  freshPrefixMinStarts?: number;
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
   * Share of the spend cap kept for methods charged on proof and callers with a record of completed
   * verifications: past 80 % of the cap (default 0.2) other starts are offered a method charged on proof
   * (409 `method_held`) or refused, and while their country is under attack, unknown starts wait
   * (503 `service_unavailable`, `reason: "spend_cap_reserve"`). 0 turns it off.
   */
  reserveShare?: number;
  /**
   * How long a completed verification makes its range and callers known, ms (one store entry each).
   * Default 86,400,000: a day, the default spend cap's window.
   */
  recordTtlMs?: number;
  /**
   * The prior: the share of paid starts real users complete, per country (ISO code, `RU`) and
   * `default` for the others. A host is judged from its first hour: a country whose paid starts
   * fall short of it by more than chance explains (three standard deviations, at least
   * `countryMinStarts` unconverted) over the window, the day or the week is under attack. Set it
   * a little under what your users complete. Default `{ default: 0.8 }`; each a share above 0, below 1.
   */
  expectedConversion?: Record<string, number>;
  safeList?: PumpingSafeList;
}

export interface ResolvedPumping {
  mode: 'enforce' | 'monitor' | 'off';
  grading: boolean;
  rangeDigits: number;
  windowMs: number;
  rangeMinStarts: number;
  prefixMinStarts: number;
  freshRangeMinStarts: number;
  freshPrefixMinStarts: number;
  callerMinStarts: number;
  countryMinStarts: number;
  underAttackMinStarts: number;
  minConversion: number;
  surgeFactor: number;
  holdMs: number;
  maxHoldMs: number;
  reserveShare: number;
  recordTtlMs: number;
  /** `default` and per ISO country code. */
  expectedConversion: Record<string, number>;
  safeList: { numbers: string[]; ranges: string[]; owners: string[] };
}
