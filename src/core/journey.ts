/**
 * A verification as the frontend sees it: a journey of one upstream session per method tried, named
 * by its first session's request id (so a handle seals the journey id, and a handle from before
 * journeys names a journey of one step). The rules here are pure; the store and the API are the
 * callers' business.
 */
import { toMajorUnits, toMinorUnits, type Money } from './money.js';
import type { SessionRecord } from './session-record.js';
import {
  methodTraits,
  type KnownVerificationMethod,
  type VerificationMethod,
} from './verification-method.js';
import { isTerminal, type VerificationStatus } from './verification-status.js';

/** The device hint a frontend may send with a start (`device`): the policy can exclude methods per device. */
export type DeviceHint = 'mobile' | 'desktop';
/** Every device hint. */
export const DEVICE_HINTS: readonly DeviceHint[] = ['mobile', 'desktop'];

export function isDeviceHint(value: unknown): value is DeviceHint {
  return (DEVICE_HINTS as readonly unknown[]).includes(value);
}

/** One method tried: the upstream session started for it, and when (ms since the epoch). */
export interface JourneyStep {
  requestId: string;
  method: VerificationMethod;
  startedAt: number;
}

/** What the module keeps about a journey, in the store under `journey:{journeyId}` (only once it has more than it can rebuild). */
export interface JourneyRecord {
  /** The first step's request id. */
  journeyId: string;
  /** E.164, the same for every step. */
  phoneNumber: string;
  device?: DeviceHint;
  /** In the order they were tried; the last is the current one. Never empty. */
  steps: JourneyStep[];
  /** Set by cancel: the journey is over for the frontend. */
  canceledAt?: number;
  createdAt: number;
}

/** The status a frontend sees of a journey: its answering session's, or `canceled`. */
export type JourneyStatus = VerificationStatus | 'canceled';
export const CANCELED = 'canceled' as const;

/** The journey of a session that has no journey record: itself, one step (a start without a device hint, or an old handle). */
export function oneStepJourney(record: SessionRecord, device?: DeviceHint): JourneyRecord {
  return {
    journeyId: record.requestId,
    phoneNumber: record.phoneNumber,
    ...(device === undefined ? {} : { device }),
    steps: [{ requestId: record.requestId, method: record.method, startedAt: record.createdAt }],
    createdAt: record.createdAt,
  };
}

/** The journey with one more step, which becomes the current one. */
export function withStep(journey: JourneyRecord, step: JourneyStep): JourneyRecord {
  return { ...journey, steps: [...journey.steps, step] };
}

export function currentStep(journey: JourneyRecord): JourneyStep {
  return journey.steps[journey.steps.length - 1]!;
}

/** The methods tried, in order. */
export function methodsTried(journey: Pick<JourneyRecord, 'steps'>): VerificationMethod[] {
  return journey.steps.map((step) => step.method);
}

/**
 * Whether the status answer stays as it is until the frontend acts (switches): `canceled`, or the
 * answering session's status is terminal. A status stream ends there.
 */
export function isJourneyTerminal(status: JourneyStatus): boolean {
  return status === CANCELED || isTerminal(status);
}

/**
 * Which session answers for the journey, and with what status: `canceled` once canceled; `verified`
 * (with the verified session) when ANY step is verified, since a user who finished the previous
 * method just as they switched is verified; otherwise the current step's session. `records` are the
 * steps' records in step order (null where the store has none); the current one must be known.
 */
export function answeringSession(
  journey: JourneyRecord,
  records: readonly (SessionRecord | null)[],
  current: SessionRecord,
): { status: JourneyStatus; record: SessionRecord } {
  if (journey.canceledAt !== undefined) return { status: CANCELED, record: current };
  const verified =
    current.status === 'verified' ? current : records.find((record) => record?.status === 'verified');
  if (verified) return { status: 'verified', record: verified };
  return { status: current.status, record: current };
}

/**
 * The methods the journey may go on with, in the policy's order: `ordered` (the policy's order of
 * the offered methods) without the methods tried and without those excluded for its device.
 */
export function remainingMethods(
  ordered: readonly KnownVerificationMethod[],
  journey: Pick<JourneyRecord, 'steps' | 'device'>,
  exclude: Readonly<Record<DeviceHint, readonly KnownVerificationMethod[]>>,
): KnownVerificationMethod[] {
  return allowedForDevice(ordered, journey, exclude).filter((method) => !tried(journey, method));
}

/**
 * The methods charged on proof the journey tried that it may name again, in the policy's order (the
 * offered ones not excluded for its device). A graded answer (the cap near, a suspected start) offers
 * them when the journey has none left: another call or bot link costs nothing unless the number's
 * owner proves it, so the user is offered a way on instead of a refusal.
 */
export function retriableMethods(
  ordered: readonly KnownVerificationMethod[],
  journey: Pick<JourneyRecord, 'steps' | 'device'>,
  exclude: Readonly<Record<DeviceHint, readonly KnownVerificationMethod[]>>,
): KnownVerificationMethod[] {
  return allowedForDevice(ordered, journey, exclude).filter(
    (method) => methodTraits(method).chargedOnProof && tried(journey, method),
  );
}

/** `ordered` without the methods excluded for the journey's device. */
function allowedForDevice(
  ordered: readonly KnownVerificationMethod[],
  journey: Pick<JourneyRecord, 'device'>,
  exclude: Readonly<Record<DeviceHint, readonly KnownVerificationMethod[]>>,
): KnownVerificationMethod[] {
  const excluded = journey.device === undefined ? [] : exclude[journey.device];
  return ordered.filter((method) => !excluded.includes(method));
}

function tried(journey: Pick<JourneyRecord, 'steps'>, method: KnownVerificationMethod): boolean {
  return journey.steps.some((step) => step.method === method);
}

/**
 * When the frontend may offer another method: the current step's start plus its method's timeout;
 * at once when the current session failed or expired (its upstream never got through in time): the
 * timeout's time if it has passed, else now (a time that does not move once it is in the past, so
 * the answer does not change from one poll to the next). Undefined when the journey is over for the frontend (canceled, verified) or no method is
 * left to switch to.
 */
export function fallbackAvailableAt(input: {
  status: JourneyStatus;
  current: Pick<SessionRecord, 'status' | 'expiresAt'>;
  step: JourneyStep;
  timeoutMs: number;
  hasCandidate: boolean;
  now: number;
}): number | undefined {
  const { status, current, step, timeoutMs, hasCandidate, now } = input;
  if (!hasCandidate || status === CANCELED || status === 'verified') return undefined;
  const timedOutAt = step.startedAt + timeoutMs;
  if (isTerminal(current.status) || current.expiresAt <= now) return Math.min(timedOutAt, now);
  return timedOutAt;
}

/** What a charge function tells of a session: the money it was charged, or undefined when none (yet). */
export type ChargeOf = (record: SessionRecord) => Money | undefined;

/**
 * The money a journey's steps may still cost, minor units: what each step was charged, and for a
 * step not charged yet that may still be (pending), its price fixed at initiation. Held against
 * `orchestration.maxCost` before another step is paid for.
 */
export function journeyExposureMinor(records: readonly (SessionRecord | null)[], chargeOf: ChargeOf): number {
  let total = 0;
  for (const record of records) {
    if (!record) continue;
    const charged = chargeOf(record);
    const counted = charged ?? (isTerminal(record.status) ? undefined : record.cost);
    total += toMinorUnits(counted?.amount) ?? 0;
  }
  return total;
}

/**
 * The money charged for a journey's steps (by the billing rule `chargeOf` applies), or null when
 * the API stated no step's price. In the currency of the steps' prices (the account's one).
 */
export function journeyCost(records: readonly (SessionRecord | null)[], chargeOf: ChargeOf): Money | null {
  const priced = records.filter((record): record is SessionRecord => record?.cost !== undefined);
  if (priced.length === 0) return null;
  let minor = 0;
  for (const record of priced) minor += toMinorUnits(chargeOf(record)?.amount) ?? 0;
  return { amount: toMajorUnits(minor), currency: priced[0]!.cost!.currency };
}

/** Why a switch is refused. */
export type SwitchRefusal =
  | { code: 'not_pending'; status: 'canceled' | 'verified' }
  | { code: 'journey_limit_reached'; limit: 'max_steps' | 'max_cost' | 'methods' }
  | { code: 'method_not_available'; available: KnownVerificationMethod[] }
  | { code: 'fallback_not_available'; availableAt: number };

/** Everything a switch is decided on (the caller reads the store, the prices and the policy). */
export interface SwitchRequest {
  journey: JourneyRecord;
  /** The journey's status (answeringSession). */
  status: JourneyStatus;
  /** The current step's record. */
  current: Pick<SessionRecord, 'status' | 'expiresAt'>;
  /** remainingMethods: the policy's order of the offered methods, less those tried and excluded. */
  remaining: readonly KnownVerificationMethod[];
  /** The method the caller named (canonical), or undefined for the policy's next. */
  named?: string;
  /** retriableMethods: tried methods charged on proof the caller may name again (never the policy's next). */
  retriable?: readonly KnownVerificationMethod[];
  /** What a start of `method` is expected to cost, minor units. */
  priceMinor(method: KnownVerificationMethod): number;
  /** journeyExposureMinor of the journey's steps. */
  spentMinor: number;
  maxSteps: number;
  maxCostMinor: number;
  /** The current method's fallback timeout, and whether the frontend may leave it before. */
  timeoutMs: number;
  skippable: boolean;
  now: number;
}

/**
 * The methods a switch could go to now, in the policy's order: none once the journey is over or
 * has used its steps; otherwise the remaining methods whose price fits under the cost ceiling.
 */
export function switchableMethods(
  request: Omit<SwitchRequest, 'named' | 'current' | 'timeoutMs' | 'skippable' | 'now'>,
): KnownVerificationMethod[] {
  if (request.status === CANCELED || request.status === 'verified') return [];
  if (request.journey.steps.length >= request.maxSteps) return [];
  return request.remaining.filter(
    (method) => request.spentMinor + request.priceMinor(method) <= request.maxCostMinor,
  );
}

/**
 * The method a switch goes to, or why it is refused, in this order: the journey is over (canceled,
 * verified); it used its steps; a named method that is neither a remaining nor a retriable one; no
 * method left; the cost ceiling; the current method not skippable before its fallback time.
 */
export function decideSwitch(
  request: SwitchRequest,
): { method: KnownVerificationMethod } | { refusal: SwitchRefusal } {
  if (request.status === CANCELED || request.status === 'verified')
    return { refusal: { code: 'not_pending', status: request.status as 'canceled' | 'verified' } };
  if (request.journey.steps.length >= request.maxSteps)
    return { refusal: { code: 'journey_limit_reached', limit: 'max_steps' } };
  const affordable = switchableMethods(request);
  let method: KnownVerificationMethod | undefined;
  if (request.named !== undefined) {
    const named =
      request.remaining.find((m) => m === request.named) ??
      request.retriable?.find((m) => m === request.named);
    if (!named) return { refusal: { code: 'method_not_available', available: affordable } };
    // A method tried before is taken again within the cost ceiling, as any other.
    const fits = request.remaining.includes(named)
      ? affordable.includes(named)
      : request.spentMinor + request.priceMinor(named) <= request.maxCostMinor;
    if (!fits) return { refusal: { code: 'journey_limit_reached', limit: 'max_cost' } };
    method = named;
  } else {
    if (request.remaining.length === 0)
      return { refusal: { code: 'journey_limit_reached', limit: 'methods' } };
    method = affordable[0];
    if (!method) return { refusal: { code: 'journey_limit_reached', limit: 'max_cost' } };
  }
  if (!request.skippable) {
    const availableAt = fallbackAvailableAt({
      status: request.status,
      current: request.current,
      step: currentStep(request.journey),
      timeoutMs: request.timeoutMs,
      hasCandidate: true,
      now: request.now,
    });
    if (availableAt !== undefined && request.now < availableAt)
      return { refusal: { code: 'fallback_not_available', availableAt } };
  }
  return { method };
}
