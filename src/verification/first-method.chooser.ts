import type { KnownVerificationMethod } from '../api/api.types.js';
import {
  chooseFirstMethods,
  unchosenOrder,
  type DeviceOutlook,
  type MethodOutlook,
} from '../account/first-method.js';
import { callingCodeOf, choiceCells, type Sums } from '../account/method-figures.js';
import type { MethodHealthWatch } from '../account/method-health.service.js';
import type { MethodStats } from '../account/method-stats.service.js';
import { pickCell } from '../account/operator-figures.js';
import type { PriceList } from '../account/price-book.js';
import { errorText } from '../core/error-text.js';
import { splitDemoted } from '../core/method-ranking.js';
import { SharedReads } from '../core/shared-reads.js';
import { DEVICE_HINTS, type DeviceHint } from '../core/journey.js';
import { nationalDestinationCode } from '../core/operator-prefix.js';
import type { VerificationLogger } from '../observability/verification-logger.js';
import type { FallbackTiming } from './fallback-timing.js';
import type { ResolvedOrchestration } from '../options/verification.options.js';

/** Days of figures the first method is chosen from. */
export const FIRST_METHOD_DAYS = 7;
/** How long a choice per operator prefix stands before its figures (a few hundred counters) are read again (module clock). */
export const FIRST_METHOD_TTL_MS = 5 * 60_000;
/**
 * The ended sessions a choice must rest on to stand FIRST_METHOD_TTL_MS: for each device with a tenth
 * of the starts or more, its candidates' together. Fewer: a life in proportion, FIRST_METHOD_MIN_TTL_MS
 * at least, so that a choice made on thin figures (or none) is made again as they grow.
 */
export const FIRST_METHOD_SETTLED_ENDED = 300;
/** The shortest life of a choice (none made yet, or made on thin figures). */
export const FIRST_METHOD_MIN_TTL_MS = 15_000;
/** A device with fewer starts than this share of all holds no choice short (a few unhinted starts). */
const EVIDENCE_DEVICE_SHARE = 0.1;
const DEVICES: readonly (DeviceHint | undefined)[] = [...DEVICE_HINTS, undefined];

interface Choice {
  until: number;
  first: Map<DeviceHint | undefined, KnownVerificationMethod>;
}

/**
 * The default `auto` (`mode: 'cost_and_time'`): puts first, for a number's operator prefix and a
 * device, the method core/first-method.ts chooses from the pooled operator figures (cost per verified
 * user, no fewer verified, a median no later than SMS's; without SMS figures for a device, no fewer
 * than its most completed method), and after every other one the methods
 * demoted on that prefix (MethodHealthWatch). Until the figures suffice, the order given stands (a
 * desktop page not starting with a call from the phone: unchosenOrder). A
 * failed read keeps the last choice (or none) and is logged.
 */
export class FirstMethodChooser {
  readonly #choices = new Map<string, Choice>();
  readonly #reading = new Map<string, Promise<Choice>>();
  /** The country's and every number's cells per method and device, shared by the country's prefixes (#cellSums). */
  readonly #pooled = new SharedReads<Sums[]>(FIRST_METHOD_MIN_TTL_MS);

  constructor(
    private readonly clock: () => number,
    private readonly stats: MethodStats,
    private readonly health: MethodHealthWatch,
    private readonly fallback: FallbackTiming,
    private readonly logger: VerificationLogger,
    private readonly settings: Pick<ResolvedOrchestration, 'exclude' | 'maxSteps'>,
  ) {}

  /** `order` (the policy's) with the chosen method first and the demoted ones last, for this number and device. */
  async reorder(
    order: readonly KnownVerificationMethod[],
    prices: PriceList | undefined,
    phoneNumber: string,
    device: DeviceHint | undefined,
  ): Promise<KnownVerificationMethod[]> {
    const states = await Promise.all(order.map((method) => this.health.refresh(method, phoneNumber)));
    const [healthy, demoted] = splitDemoted(order, (i) => states[i] === 'demoted');
    // Keyed by the healthy candidates: a method demoted (or back) makes the choice again among those left.
    const key = `${callingCodeOf(phoneNumber)}~${nationalDestinationCode(phoneNumber)}:${healthy.join(',')}`;
    const choice = await this.#choice(key, healthy, prices, phoneNumber);
    const first = choice.first.get(device);
    const rest =
      first === undefined
        ? unchosenOrder(healthy, device, device === undefined ? [] : this.settings.exclude[device])
        : [first, ...healthy.filter((method) => method !== first)];
    return [...rest, ...demoted];
  }

  #choice(
    key: string,
    candidates: readonly KnownVerificationMethod[],
    prices: PriceList | undefined,
    phoneNumber: string,
  ): Promise<Choice> {
    const cached = this.#choices.get(key);
    if (cached && this.clock() < cached.until) return Promise.resolve(cached);
    let reading = this.#reading.get(key);
    if (!reading) {
      reading = this.#read(candidates, prices, phoneNumber, cached)
        .then((choice) => {
          this.#choices.set(key, choice);
          return choice;
        })
        .finally(() => this.#reading.delete(key));
      this.#reading.set(key, reading);
    }
    return reading;
  }

  async #read(
    candidates: readonly KnownVerificationMethod[],
    prices: PriceList | undefined,
    phoneNumber: string,
    last: Choice | undefined,
  ): Promise<Choice> {
    const now = this.clock();
    if (!prices) return { until: now + FIRST_METHOD_MIN_TTL_MS, first: new Map() };
    try {
      const devices = await Promise.all(
        DEVICES.map((device) => this.#device(candidates, prices, phoneNumber, device)),
      );
      return {
        until: now + choiceLifeMs(devices),
        first: chooseFirstMethods(devices, this.settings.maxSteps) as Choice['first'],
      };
    } catch (error) {
      this.logger.warn('orchestration: operator figures could not be read; the first method stands', {
        error: errorText(error),
      });
      return { until: now + FIRST_METHOD_TTL_MS, first: last?.first ?? new Map() };
    }
  }

  async #device(
    candidates: readonly KnownVerificationMethod[],
    prices: PriceList,
    phoneNumber: string,
    device: DeviceHint | undefined,
  ): Promise<DeviceOutlook> {
    const excluded: readonly string[] = device === undefined ? [] : this.settings.exclude[device];
    const allowed = candidates.filter((m) => !excluded.includes(m) && prices.minorByMethod.has(m));
    const read = await Promise.all(
      allowed.map(async (method) => {
        const sums = await this.#cellSums(method, phoneNumber, device);
        return { method, sums, figures: pickCell(sums) };
      }),
    );
    const outlooks: MethodOutlook[] = [];
    for (const { method, figures } of read) {
      if (figures === undefined) continue;
      const fallbackMs = await this.fallback.momentMs(method, phoneNumber, device);
      outlooks.push({ method, figures, priceMinor: prices.minorByMethod.get(method)!, fallbackMs });
    }
    // The device's weight: its country's starts of every method (the population's mix of devices).
    const weight = read.reduce((sum, { sums }) => sum + (sums[1]?.started ?? 0), 0);
    return { device, weight, candidates: outlooks, order: allowed };
  }

  /**
   * The method's choice cells for the number and device: its operator prefix's read now, the country's
   * and every number's (the same for all of a country's prefixes) read once per FIRST_METHOD_MIN_TTL_MS:
   * a start on a fresh prefix reads its own cells only.
   */
  async #cellSums(method: KnownVerificationMethod, phoneNumber: string, device: DeviceHint | undefined) {
    const [own, ...pooled] = choiceCells(phoneNumber, device);
    const [mine, upper] = await Promise.all([
      this.stats.cellSums(method, [own!], FIRST_METHOD_DAYS),
      this.#pooled.get(`${method}:${pooled.join(',')}`, this.clock(), () =>
        this.stats.cellSums(method, pooled, FIRST_METHOD_DAYS),
      ),
    ]);
    return [...mine, ...upper];
  }
}

/**
 * How long a choice made on `devices` stands: FIRST_METHOD_TTL_MS × the ended sessions behind its
 * thinnest device (of a tenth of the ended sessions or more) ÷ FIRST_METHOD_SETTLED_ENDED, within
 * [FIRST_METHOD_MIN_TTL_MS, FIRST_METHOD_TTL_MS]. Shares by ended sessions, not starts: a device hint
 * is the caller's word, and starts nobody ends (unproven) would otherwise keep every choice short.
 */
export function choiceLifeMs(devices: readonly DeviceOutlook[]): number {
  const behind = devices.map((d) => d.candidates.reduce((sum, c) => sum + c.figures.ended, 0));
  const total = behind.reduce((sum, ended) => sum + ended, 0);
  let evidence = 0;
  if (total > 0) evidence = Math.min(...behind.filter((ended) => ended >= total * EVIDENCE_DEVICE_SHARE));
  const life = Math.floor((FIRST_METHOD_TTL_MS * evidence) / FIRST_METHOD_SETTLED_ENDED);
  return Math.min(Math.max(life, FIRST_METHOD_MIN_TTL_MS), FIRST_METHOD_TTL_MS);
}
