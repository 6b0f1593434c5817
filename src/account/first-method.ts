import type { DeviceHint } from '../core/journey.js';
import { methodTraits, type VerificationMethod } from '../core/verification-method.js';
import { completedWithin, verifiedQuantile, type CellFigures } from './operator-figures.js';

/*
 * The default `auto` (`mode: 'cost_and_time'`): the first method per device for one operator prefix,
 * chosen for the expected cost per verified user under a time budget. Pure; the figures are the
 * pooled operator cells (operator-figures.ts), the policy reads them.
 */

/** The share of users assumed lost at a switch (they close the page): a switch costs users. */
export const SWITCH_LEAVE_SHARE = 0.1;
/**
 * The weight of the assumed share a later step verifies after a switch (carriedAfter), in unverified
 * sessions: a cell's own share takes over as its switches' outcomes come in.
 */
export const CARRIED_PRIOR_ENDS = 20;
/** The method every other is measured against: its median time is the budget, its verified users the floor. */
export const REFERENCE_METHOD = 'sms';
/**
 * The budget of a device without the reference's figures (SMS is never reached there): SMS's usual
 * median time to verify (delivery and typing the code), or its stand-in's median when later.
 */
export const REFERENCE_MEDIAN_PRIOR_MS = 30_000;

/** What is known of one method for one device: its pooled figures, price and fallback moment. */
export interface MethodOutlook {
  method: VerificationMethod;
  figures: CellFigures;
  /** The price of a start, minor units. */
  priceMinor: number;
  /** When its step falls back (ms after its start). */
  fallbackMs: number;
}

/** One device's candidates (the reference among them) and its weight in the population. */
export interface DeviceOutlook {
  device: DeviceHint | undefined;
  /** Its share of the starts (any unit: the weights are compared). */
  weight: number;
  candidates: readonly MethodOutlook[];
  /**
   * The methods a journey of this device tries, in order, with and without figures: a step falls back
   * to the next of them. Absent: to the judged method (the reference, or its stand-in).
   */
  order?: readonly VerificationMethod[];
}

/** Per user starting with a method (then the reference): verified, money spent, verified within the budget. */
export interface Expected {
  verified: number;
  costMinor: number;
  /** Share of users verified within the budget (the reference's median time). */
  withinBudget: number;
}

/** What a start of `m` is expected to be charged, by its billing rule. */
function charge(m: MethodOutlook, verified: number): number {
  const billing = methodTraits(m.method).billing;
  if (billing === 'on_verified') return m.priceMinor * verified;
  if (billing === 'on_delivery') return m.priceMinor * (m.figures.delivery ?? 1);
  return m.priceMinor;
}

/**
 * Of the users `first` left unverified, the share a later step verifies (the switch's cost in users is
 * the rest): its cell's rescued ÷ unverified sessions, weighed with CARRIED_PRIOR_ENDS sessions of the
 * reference's completion less SWITCH_LEAVE_SHARE, never above that prior: a user verified after the
 * switch is counted when verified, one who never is only at the step's expiry, so a young share flatters.
 * A method charged on proof has no evidence of those who leave without switching (a followed page of a
 * free start is none, FigureEvidence): its learned share is of those who switched, and
 * SWITCH_LEAVE_SHARE stays assumed before it.
 */
export function carriedAfter(first: MethodOutlook, reference: MethodOutlook): number {
  const unseenLeave = methodTraits(first.method).chargedOnProof ? SWITCH_LEAVE_SHARE : 0;
  const prior = reference.figures.completion * (1 - SWITCH_LEAVE_SHARE + unseenLeave);
  const { rescued, ended, verified } = first.figures;
  const unverified = rescued === undefined ? 0 : Math.max(ended - verified, 0);
  const learned = ((rescued ?? 0) + CARRIED_PRIOR_ENDS * prior) / (unverified + CARRIED_PRIOR_ENDS);
  // Only a cost: a later step's failure is counted last (at the step's expiry), its success at once.
  return (1 - unseenLeave) * Math.min(learned, prior);
}

/**
 * A user's expected outcome starting with `first` and falling back to `reference` at its moment (the
 * next method of the journey's order, see chooseFirstMethods): verified by `first` within its moment (or
 * later, for a method completed outside the page, whose step goes on after a switch), else, less
 * SWITCH_LEAVE_SHARE who leave, by the method fallen back to.
 */
export function expectedOf(first: MethodOutlook, reference: MethodOutlook, budgetMs: number): Expected {
  const byReference = (ms: number) => completedWithin(reference.figures, ms);
  if (first.method === reference.method)
    return {
      verified: reference.figures.completion,
      costMinor: charge(reference, reference.figures.completion),
      withinBudget: byReference(budgetMs),
    };
  const cutOff = methodTraits(first.method).codeEntry !== 'never';
  const inTime = completedWithin(first.figures, first.fallbackMs);
  const own = cutOff ? inTime : Math.max(first.figures.completion, inTime);
  const switched = (1 - inTime) * (1 - SWITCH_LEAVE_SHARE);
  // Those whose own late completion verifies them need no reference: counted once.
  const lateShare = 1 - inTime > 0 ? (own - inTime) / (1 - inTime) : 0;
  const ownWithin = cutOff
    ? completedWithin(first.figures, Math.min(budgetMs, first.fallbackMs))
    : completedWithin(first.figures, budgetMs);
  // Verified after the switch (carriedAfter), within the budget as fast as the reference verifies.
  const carried = (1 - inTime) * (1 - lateShare) * carriedAfter(first, reference);
  const completion = reference.figures.completion;
  const soon = budgetMs > first.fallbackMs && completion > 0 ? byReference(budgetMs - first.fallbackMs) : 0;
  return {
    verified: own + carried,
    costMinor: charge(first, own) + switched * charge(reference, completion),
    withinBudget: ownWithin + (completion > 0 ? (carried * soon) / completion : 0),
  };
}

/** Of a device's candidates (none of them the reference), the one the most of its users complete alone. */
export function standInFor(candidates: readonly MethodOutlook[]): MethodOutlook | undefined {
  let best: MethodOutlook | undefined;
  for (const c of candidates)
    if (best === undefined || c.figures.completion > best.figures.completion) best = c;
  return best;
}

/**
 * The first method per device: the combination of candidates with the least expected cost per
 * verified user over the devices (by weight) such that the population's verified users are no fewer
 * than with the reference alone and at least half of them are verified within the reference's median
 * time (the median no later). The reference (or its stand-in) is judged alone, any other first method with
 * the step its journey falls back to: the next method of the device's order with figures (nextStep), else
 * the reference: a cheap first method followed by one that verifies few goes first no more. A device
 * without the reference's figures is judged against its candidate that verifies the most alone
 * (`standInFor`), within REFERENCE_MEDIAN_PRIOR_MS (or the stand-in's median, when later): a first method
 * few of its users complete, the switch costing SWITCH_LEAVE_SHARE, or one they complete late, goes first
 * no more. An assumed budget only restrains: its users within count up to half of its verified, never
 * carrying another device's median. A device without figures is left out (the policy's order). With
 * `maxSteps` 1 (`orchestration.maxSteps`: a journey never falls back), every candidate is judged alone.
 */
export function chooseFirstMethods(
  devices: readonly DeviceOutlook[],
  maxSteps = Number.POSITIVE_INFINITY,
): Map<DeviceHint | undefined, VerificationMethod> {
  const known = devices.flatMap((d) => {
    if (d.weight <= 0) return [];
    const reference = d.candidates.find((c) => c.method === REFERENCE_METHOD);
    const budget = reference === undefined ? null : verifiedQuantile(reference.figures, 0.5);
    // `assumed`: users within an assumed budget count up to half of the verified ones (no surplus).
    const judge = (against: MethodOutlook, budgetMs: number, assumed: boolean) => {
      const outcome = (c: MethodOutlook, next = against) => {
        const e = expectedOf(c, next, budgetMs);
        return assumed ? { ...e, withinBudget: Math.min(e.withinBudget, e.verified / 2) } : e;
      };
      const options = d.candidates.map((c) => ({
        method: c.method,
        // A journey of one step never falls back: each candidate is judged alone.
        ...outcome(c, c.method === against.method || maxSteps <= 1 ? c : nextStep(d, c, against)),
      }));
      return { device: d.device, weight: d.weight, options, floor: outcome(against) };
    };
    if (reference !== undefined && budget !== null) return [judge(reference, budget, false)];
    const standIn = standInFor(d.candidates);
    if (standIn === undefined) return [];
    // At or past the stand-in's median: the stand-in alone verifies half of its users within it.
    const prior = Math.max(REFERENCE_MEDIAN_PRIOR_MS, verifiedQuantile(standIn.figures, 0.5) ?? 0);
    return [judge(standIn, prior, true)];
  });
  const chosen = new Map<DeviceHint | undefined, VerificationMethod>();
  if (known.length === 0) return chosen;
  const floorVerified = known.reduce((sum, d) => sum + d.weight * d.floor.verified, 0);
  let best: { cost: number; picks: number[] } | undefined;
  const picks: number[] = [];
  const walk = (i: number, verified: number, cost: number, within: number): void => {
    if (i === known.length) {
      // A tolerance of a millionth: the reference alone always qualifies.
      if (verified < floorVerified - 1e-6 || within < verified / 2 - 1e-6) return;
      const perVerified = verified > 0 ? cost / verified : Number.POSITIVE_INFINITY;
      if (best === undefined || perVerified < best.cost) best = { cost: perVerified, picks: [...picks] };
      return;
    }
    const d = known[i]!;
    for (const [j, o] of d.options.entries()) {
      picks.push(j);
      walk(
        i + 1,
        verified + d.weight * o.verified,
        cost + d.weight * o.costMinor,
        within + d.weight * o.withinBudget,
      );
      picks.pop();
    }
  };
  walk(0, 0, 0, 0);
  const picked = best as { picks: number[] } | undefined;
  if (picked) for (const [i, d] of known.entries()) chosen.set(d.device, d.options[picked.picks[i]!]!.method);
  return chosen;
}

/**
 * The step a journey that starts with `first` falls back to: the next method of the device's order,
 * judged by its figures; `against` where the order is not given or that method has none yet.
 */
function nextStep(d: DeviceOutlook, first: MethodOutlook, against: MethodOutlook): MethodOutlook {
  const method = d.order?.find((m) => m !== first.method);
  return d.candidates.find((c) => c.method === method) ?? against;
}

/**
 * The order a device without a first method chosen (no figures for its candidates yet) starts in: the
 * policy's, but a desktop page does not start with a method the user completes by a call from the phone
 * (`codeEntry: 'never'`: the reverse call, dialled by hand there where a phone's page taps a link): the
 * first method of the order that is not one goes first, the rest keep their order. Once the desktop's
 * own figures choose, they decide. An order of such methods only stands. `excluded`: the methods the
 * device hint rules out (dropped from the order later), which neither lead nor go first.
 */
export function unchosenOrder<M extends VerificationMethod>(
  order: readonly M[],
  device: DeviceHint | undefined,
  excluded: readonly string[] = [],
): M[] {
  if (device !== 'desktop') return [...order];
  const allowed = (method: M): boolean => !excluded.includes(method);
  const lead = order.findIndex(allowed);
  const i = order.findIndex((method) => allowed(method) && methodTraits(method).codeEntry !== 'never');
  if (i <= lead) return [...order];
  return [order[i]!, ...order.filter((_, j) => j !== i)];
}
