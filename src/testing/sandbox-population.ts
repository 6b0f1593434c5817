/**
 * The population knobs: how simulated end users behave per method (is the code or call delivered, does the
 * user complete, how long each takes), optionally per device. Types, defaults and validation; the draw
 * itself is in `sandbox-users.ts`.
 */
import { canonicalMethod, type SandboxMethod } from './sandbox.options.js';
import { SandboxProblem, validationError } from './problem.js';
import { ArgumentRangeError } from '../core/phone-verification.error.js';

export const SANDBOX_DEVICES = ['mobile', 'desktop'] as const;
/** The end user's device: the API has no such field; the sandbox draws it or a driver declares it. */
export type SandboxDevice = (typeof SANDBOX_DEVICES)[number];

/** A duration over the population: log-normal, half the users below `medianMs`, 90 % below `p90Ms`. */
export interface SandboxUserTime {
  medianMs: number;
  /** Default `medianMs` (every user takes exactly the median). */
  p90Ms?: number;
}

/** What happens to a session whose code or call is never delivered. */
export type SandboxUndelivered = 'expire' | 'fail';

/** One method's behaviour; every field optional (defaults in `DEFAULT_BEHAVIOUR`). */
export interface SandboxUserBehaviour {
  /**
   * Probability (0..1) that the code or call reaches the user: the SMS, the flash call, the msgr1 message;
   * for msgr2_bot that the user opens the bot and shares the number; for operator_id that the SIM push
   * reaches the subscriber (otherwise the SMS fallback). Not for reverse_flash_call: nothing is delivered.
   */
  deliveryRate?: number;
  /** Time from initiation to delivery (or, undelivered, to the channel giving up). */
  deliveryTime?: SandboxUserTime;
  /** Probability (0..1) that a user who got the code, call or push completes; reverse_flash_call: calls. */
  completionRate?: number;
  /** The user's own time from delivery (reverse_flash_call: from initiation) to completing. */
  completionTime?: SandboxUserTime;
  /** sms, flash_call, msgr1_otp: an undelivered session stays `sent` and expires (default) or fails. */
  undelivered?: SandboxUndelivered;
}

/** A method's behaviour, with optional overrides for mobile and for desktop users. */
export interface SandboxMethodBehaviour extends SandboxUserBehaviour {
  mobile?: SandboxUserBehaviour;
  desktop?: SandboxUserBehaviour;
}

/** An account's simulated users. Methods without an entry behave as without a population. */
export interface SandboxPopulation {
  /** Same seed, same decisions (per phone number, method and attempt). Default `"sandbox"`. */
  seed?: string | number;
  /** Share (0..1) of phone numbers whose user is on a desktop (unless a driver declared the device). Default 0. */
  desktopShare?: number;
  /** Keyed by method (`msgr1` accepted for `msgr1_otp`). */
  methods?: Partial<Record<SandboxMethod | 'msgr1', SandboxMethodBehaviour>>;
}

export interface ResolvedUserBehaviour {
  deliveryRate: number;
  deliveryTime: Required<SandboxUserTime>;
  completionRate: number;
  completionTime: Required<SandboxUserTime>;
  undelivered: SandboxUndelivered;
}

export interface ResolvedPopulation {
  seed: string;
  desktopShare: number;
  methods: Partial<Record<SandboxMethod, Record<SandboxDevice, ResolvedUserBehaviour>>>;
  /** The population as given, method names canonical: what the account view shows. */
  given: SandboxPopulation;
}

/** Defaults of a method entry's fields: delivered like auto-delivery (1 s), every user completes in 10 s. */
export const DEFAULT_BEHAVIOUR: Readonly<ResolvedUserBehaviour> = {
  deliveryRate: 1,
  deliveryTime: { medianMs: 1000, p90Ms: 1000 },
  completionRate: 1,
  completionTime: { medianMs: 10_000, p90Ms: 10_000 },
  undelivered: 'expire',
};

export const DEFAULT_POPULATION_SEED = 'sandbox';
/** Longer than any TTL (600 s) many times over: a user slower than the TTL finds the session expired. */
const MAX_TIME_MS = 86_400_000;
const UNDELIVERED_METHODS: ReadonlySet<SandboxMethod> = new Set(['sms', 'flash_call', 'msgr1_otp']);
const BEHAVIOUR_KEYS = ['deliveryRate', 'deliveryTime', 'completionRate', 'completionTime', 'undelivered'];

const wireName = (key: string): string => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

function asRecord(value: unknown, path: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw validationError(`${path} must be an object`);
  }
  return value as Record<string, unknown>;
}

function onlyKeys(record: Record<string, unknown>, allowed: readonly string[], path: string): void {
  for (const key of Object.keys(record)) {
    if (!allowed.includes(key)) throw validationError(`${path}: unknown field ${wireName(key)}`);
  }
}

function rate(value: unknown, path: string): number {
  if (typeof value !== 'number' || !(value >= 0 && value <= 1)) {
    throw validationError(`${path} must be a number from 0 to 1`);
  }
  return value;
}

function time(value: unknown, path: string): Required<SandboxUserTime> {
  const record = asRecord(value, path);
  onlyKeys(record, ['medianMs', 'p90Ms'], path);
  const isMs = (v: unknown): v is number =>
    typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= MAX_TIME_MS;
  if (!isMs(record.medianMs))
    throw validationError(`${path}.median_ms must be an integer from 0 to ${MAX_TIME_MS}`);
  const medianMs = record.medianMs;
  const p90Ms = record.p90Ms ?? medianMs;
  if (!isMs(p90Ms) || p90Ms < medianMs) {
    throw validationError(`${path}.p90_ms must be an integer from median_ms to ${MAX_TIME_MS}`);
  }
  // A log-normal with a median of 0 has no spread to fit.
  if (medianMs === 0 && p90Ms !== 0) throw validationError(`${path}.p90_ms must be 0 when median_ms is 0`);
  return { medianMs, p90Ms };
}

/** Validates one behaviour's given fields (all optional) against what `method` takes. */
function behaviour(
  value: unknown,
  method: SandboxMethod,
  path: string,
  nested: boolean,
): SandboxMethodBehaviour {
  const record = asRecord(value, path);
  onlyKeys(record, nested ? BEHAVIOUR_KEYS : [...BEHAVIOUR_KEYS, 'mobile', 'desktop'], path);
  const out: SandboxMethodBehaviour = {};
  if (
    method === 'reverse_flash_call' &&
    (record.deliveryRate !== undefined || record.deliveryTime !== undefined)
  ) {
    throw validationError(
      `${path}: reverse_flash_call has nothing to deliver (the user calls): use completion_rate and completion_time`,
    );
  }
  if (record.deliveryRate !== undefined)
    out.deliveryRate = rate(record.deliveryRate, `${path}.delivery_rate`);
  if (record.deliveryTime !== undefined)
    out.deliveryTime = time(record.deliveryTime, `${path}.delivery_time`);
  if (record.completionRate !== undefined) {
    out.completionRate = rate(record.completionRate, `${path}.completion_rate`);
  }
  if (record.completionTime !== undefined) {
    out.completionTime = time(record.completionTime, `${path}.completion_time`);
  }
  if (record.undelivered !== undefined) {
    if (!UNDELIVERED_METHODS.has(method)) {
      throw validationError(
        `${path}.undelivered applies to sms, flash_call and msgr1_otp only (an unopened bot expires; an undelivered push falls back to SMS)`,
      );
    }
    if (record.undelivered !== 'expire' && record.undelivered !== 'fail') {
      throw validationError(`${path}.undelivered must be 'expire' or 'fail'`);
    }
    out.undelivered = record.undelivered;
  }
  if (!nested) {
    for (const device of SANDBOX_DEVICES) {
      if (record[device] !== undefined)
        out[device] = behaviour(record[device], method, `${path}.${device}`, true);
    }
  }
  return out;
}

function resolveBehaviour(
  base: SandboxUserBehaviour,
  override: SandboxUserBehaviour = {},
): ResolvedUserBehaviour {
  return {
    deliveryRate: override.deliveryRate ?? base.deliveryRate ?? DEFAULT_BEHAVIOUR.deliveryRate,
    deliveryTime: {
      ...DEFAULT_BEHAVIOUR.deliveryTime,
      ...(override.deliveryTime ?? base.deliveryTime),
    } as Required<SandboxUserTime>,
    completionRate: override.completionRate ?? base.completionRate ?? DEFAULT_BEHAVIOUR.completionRate,
    completionTime: {
      ...DEFAULT_BEHAVIOUR.completionTime,
      ...(override.completionTime ?? base.completionTime),
    } as Required<SandboxUserTime>,
    undelivered: override.undelivered ?? base.undelivered ?? DEFAULT_BEHAVIOUR.undelivered,
  };
}

/**
 * Validates a population (camelCase, as `SandboxPopulation`); a bad field is a 400 `validation_error`
 * naming it in snake_case, as on the wire. Nothing is half-applied: the caller stores the result or not.
 */
export function parsePopulation(input: unknown): ResolvedPopulation {
  const record = asRecord(input, 'population');
  onlyKeys(record, ['seed', 'desktopShare', 'methods'], 'population');
  const given: SandboxPopulation = {};
  if (record.seed !== undefined) {
    const seed = record.seed;
    const ok =
      (typeof seed === 'string' && seed.length >= 1 && seed.length <= 128) ||
      (typeof seed === 'number' && Number.isSafeInteger(seed));
    if (!ok) throw validationError('population.seed must be a string of 1 to 128 characters or an integer');
    given.seed = seed as string | number;
  }
  if (record.desktopShare !== undefined) {
    given.desktopShare = rate(record.desktopShare, 'population.desktop_share');
  }
  const methods: Partial<Record<SandboxMethod, Record<SandboxDevice, ResolvedUserBehaviour>>> = {};
  if (record.methods !== undefined) {
    const entries = asRecord(record.methods, 'population.methods');
    const givenMethods: Partial<Record<SandboxMethod, SandboxMethodBehaviour>> = {};
    for (const [name, value] of Object.entries(entries)) {
      const method = canonicalMethod(name);
      if (!method) throw validationError(`population.methods: unknown method ${JSON.stringify(name)}`);
      if (givenMethods[method]) throw validationError(`population.methods: ${method} is given twice`);
      const entry = behaviour(value, method, `population.methods.${name}`, false);
      givenMethods[method] = entry;
      methods[method] = {
        mobile: resolveBehaviour(entry, entry.mobile),
        desktop: resolveBehaviour(entry, entry.desktop),
      };
    }
    given.methods = givenMethods;
  }
  return {
    seed: String(given.seed ?? DEFAULT_POPULATION_SEED),
    desktopShare: given.desktopShare ?? 0,
    methods,
    given,
  };
}

/** `SandboxOptions.population`, validated when the sandbox starts: a bad one is a RangeError there. */
export function populationOption(input: SandboxPopulation | null | undefined): ResolvedPopulation | null {
  if (input === undefined || input === null) return null;
  try {
    return parsePopulation(input);
  } catch (err) {
    if (err instanceof SandboxProblem) throw new ArgumentRangeError(err.detail, { cause: err });
    throw err;
  }
}
