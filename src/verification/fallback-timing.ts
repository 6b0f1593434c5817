import { callingCodeOf, dayName } from '../account/method-figures.js';
import type { MethodStats } from '../account/method-stats.service.js';
import {
  fallbackAfterMs,
  learnsFallbackMoment,
  matureFigures,
  cutOffBySwitch,
  type MomentCounts,
  stepFallbackMs,
  sumMomentCounts,
} from '../core/fallback-moment.js';
import { DEVICE_HINTS, type DeviceHint, type JourneyStep } from '../core/journey.js';
import type { VerificationMethod } from '../core/verification-method.js';
import type { VerificationLogger } from '../observability/verification-logger.js';
import type { ResolvedOrchestration, ResolvedVerificationOptions } from '../options/verification.options.js';
import type { KnownVerificationMethod } from '../api/api.types.js';
import {
  dampedMoment,
  recentMoments,
  recentRange,
  SETTLED_AFTER_MS,
  thinFiguresMoment,
  type AdoptedMoment,
} from '../core/moment-damping.js';
import { VerificationOpsEventName, type FallbackMomentEvent } from '../core/verification-events.js';

/** Days of figures the moment is learned from: recent enough to follow a change, enough to have samples. */
export const FALLBACK_FIGURES_DAYS = 7;
/**
 * How long a learned moment stands before the figures are read again (module clock). Short: a new
 * host learns within its first minutes, and a read is one store round of a few keys per day.
 */
export const FALLBACK_FIGURES_TTL_MS = 30_000;
/**
 * How long the fixed moment of a method completed outside the page stands while its figures are still
 * too thin to learn from (none learned yet): a cold host reads them again this soon, so its first
 * learned moment is not held back up to FALLBACK_FIGURES_TTL_MS behind the samples that make it. Only
 * there: a step not cut off by a switch is still completed after it, so an early moment costs at most a
 * next step; a step whose code is typed in the page keeps the full TTL. A failed read stands the full TTL.
 */
export const FALLBACK_THIN_TTL_MS = 5_000;
/** A target this share further than the one last reported, the same way, is reported as another jump. */
export const REPORT_AGAIN_SHARE = 0.1;

/**
 * Every device's figures, pooled: what a device's moment is learned from until its own figures
 * hold `minSamples` (a desktop step completes less often, so its figures fill later than the
 * method's; the method's moment on this calling code is a nearer guess than the fixed timeout).
 * Only for a method completed outside the page: a guess too early there costs at most a next step
 * (the user may still complete it), while a step whose code is typed in the page is abandoned at
 * the switch, so it keeps the host's fixed moment until its own figures hold enough.
 */
const EVERY_DEVICE: readonly (DeviceHint | undefined)[] = [...DEVICE_HINTS, undefined];

/** The host's fixed moment for `method` (`timeoutSeconds`; a method it does not name: SMS's). */
export function fixedFallbackMs(settings: ResolvedOrchestration, method: string): number {
  const seconds = settings.timeoutSeconds[method as KnownVerificationMethod];
  return (seconds ?? settings.timeoutSeconds.sms) * 1000;
}

/** A step's fallback moment as read: whether it was learned from the figures (see stepFallbackMs). */
interface FallbackMoment {
  afterMs: number;
  learned: boolean;
}

/** The counts of one read (module clock), and the last day of the window they were summed over. */
interface CountsRead {
  at: number;
  day: string;
  counts: MomentCounts;
}

/**
 * When a step may fall back, ms after its start (`fallback_available_at`), for the status answers and
 * the switch route alike: learned per method, calling code and device hint from the method figures
 * (`orchestration.fallback`, core/fallback-moment.ts) of the steps started a ceiling ago or more
 * (`matureFigures`, against this instance's read of a ceiling ago); until a device's figures hold
 * enough samples, from every device's (EVERY_DEVICE); until those do too, or when learning is off,
 * the method's fixed `timeoutSeconds`. Once learned, a probe step (one in PROBE_EVERY of a method whose
 * code is typed in the page) at the ceiling. Each (method, calling code, device) is read at most once
 * per FALLBACK_FIGURES_TTL_MS, one read at a time; a read that fails keeps the last moment (or the
 * fixed one) and is logged: a store hiccup never delays a status answer's fallback. A plain object
 * the OrchestrationPolicy makes: the policy says when a step may fall back.
 */
export class FallbackTiming {
  readonly #cache = new Map<string, FallbackMoment & { until: number }>();
  readonly #reading = new Map<string, Promise<FallbackMoment>>();
  /** Per key, the reads of the last ceiling and the newest before: see matureFigures. */
  readonly #reads = new Map<string, CountsRead[]>();
  /** Per key, the learned moments adopted in the recent range (core/moment-damping.ts). */
  readonly #adopted = new Map<string, AdoptedMoment[]>();
  /** Keys whose figures point beyond the recent range: which way, and the target last reported. */
  readonly #damping = new Map<string, { direction: number; targetMs: number }>();

  constructor(
    private readonly options: ResolvedVerificationOptions,
    private readonly stats: MethodStats,
    private readonly logger: VerificationLogger,
    /** Tells operations of a damped jump (`verification.fallback_moment`); never rejects. */
    private readonly announce: (event: FallbackMomentEvent) => Promise<void> = () => Promise.resolve(),
  ) {}

  /** Ms after `step` (of a journey for `phoneNumber`, started with `device`) started when it may fall back. */
  async afterMs(
    step: Pick<JourneyStep, 'method' | 'requestId'>,
    phoneNumber: string,
    device: DeviceHint | undefined,
  ): Promise<number> {
    const settings = this.options.orchestration.fallback;
    const moment = await this.#moment(step.method, phoneNumber, device);
    return settings === false
      ? moment.afterMs
      : stepFallbackMs(step.method, step.requestId, settings, moment);
  }

  /** The method's moment for the number's calling code and the device, as a step that is not a probe gets it. */
  async momentMs(
    method: VerificationMethod,
    phoneNumber: string,
    device: DeviceHint | undefined,
  ): Promise<number> {
    return (await this.#moment(method, phoneNumber, device)).afterMs;
  }

  async #moment(
    method: VerificationMethod,
    phoneNumber: string,
    device: DeviceHint | undefined,
  ): Promise<FallbackMoment> {
    const fixed = fixedFallbackMs(this.options.orchestration, method);
    if (this.options.orchestration.fallback === false) return { afterMs: fixed, learned: false };
    const callingCode = callingCodeOf(phoneNumber);
    const key = `${method}:${callingCode}:${device ?? ''}`;
    const cached = this.#cache.get(key);
    if (cached && this.options.clock() < cached.until) return cached;
    let reading = this.#reading.get(key);
    if (!reading) {
      reading = this.#read(key, method, callingCode, device, fixed, cached).finally(() =>
        this.#reading.delete(key),
      );
      this.#reading.set(key, reading);
    }
    return reading;
  }

  async #read(
    key: string,
    method: VerificationMethod,
    callingCode: string,
    device: DeviceHint | undefined,
    fixed: number,
    last: FallbackMoment | undefined,
  ): Promise<FallbackMoment> {
    let moment: FallbackMoment = last
      ? { afterMs: last.afterMs, learned: last.learned }
      : { afterMs: fixed, learned: false };
    let ttlMs = FALLBACK_FIGURES_TTL_MS;
    try {
      const learned =
        (await this.#learned(key, method, callingCode, [device], fixed)) ??
        (await this.#pooled(method, callingCode, fixed));
      moment = learned ? this.#damped(key, learned.afterMs, 'learned') : this.#damped(key, fixed, 'thin');
      if (!moment.learned && !cutOffBySwitch(method)) ttlMs = FALLBACK_THIN_TTL_MS;
    } catch (error) {
      this.logger.warn('orchestration: method figures could not be read; the fallback moment stands', {
        method,
        error: error instanceof Error ? error.name : 'error',
      });
    }
    this.#cache.set(key, { ...moment, until: this.options.clock() + ttlMs });
    return moment;
  }

  /**
   * The moment adopted for `key` when the figures point at `target`: `learned` (they say it), or
   * `thin` (too few samples; `target` is the fixed moment). A jump beyond the recent range is followed
   * at a bounded pace (dampedMoment; thin figures at that pace from the last moment learned,
   * thinFiguresMoment). Figures pointing beyond the range are reported (a warning and
   * `verification.fallback_moment`) whether one step reaches them or not, once per jump: a jump the
   * other way, or a target REPORT_AGAIN_SHARE further than the one reported, is another jump, so
   * figures walked a step at a time are reported on the way.
   * Thin figures with no moment adopted: the fixed one, unlearned. Per instance: an instance that just
   * booted adopts the figures' moment.
   */
  #damped(key: string, target: number, figures: 'learned' | 'thin'): FallbackMoment {
    const now = this.options.clock();
    const adopted = this.#adopted.get(key) ?? [];
    if (figures === 'thin' && adopted.length === 0) return { afterMs: target, learned: false };
    const { afterMs, damped } =
      figures === 'learned' ? dampedMoment(adopted, target, now) : thinFiguresMoment(adopted, target, now);
    const range = recentRange(adopted, now, figures === 'learned' ? SETTLED_AFTER_MS : 0);
    this.#adopted.set(key, recentMoments([...adopted, { afterMs, at: now }], now));
    if (range === undefined || (target >= range.low && target <= range.high)) this.#damping.delete(key);
    else {
      const from = range.last.afterMs;
      const direction = Math.sign(target - from);
      const reported = this.#damping.get(key);
      if (
        reported?.direction !== direction ||
        Math.abs(target - reported.targetMs) > REPORT_AGAIN_SHARE * reported.targetMs
      ) {
        this.#damping.set(key, { direction, targetMs: target });
        this.#report(key, figures, from, target, afterMs, now);
      }
    }
    return { afterMs, learned: figures === 'learned' || damped };
  }

  #report(
    key: string,
    figures: 'learned' | 'thin',
    adoptedMs: number,
    targetMs: number,
    afterMs: number,
    now: number,
  ): void {
    const [method, callingCode, device] = key.split(':') as [VerificationMethod, string, string];
    this.logger.warn(
      'orchestration: a learned fallback moment jumped beyond its recent range; followed gradually',
      {
        method,
        calling_code: callingCode,
        device: device || 'none',
        figures,
        adopted_ms: adoptedMs,
        learned_ms: targetMs,
      },
    );
    void this.announce({
      event: VerificationOpsEventName.fallbackMoment,
      method,
      callingCode: /^\d+$/.test(callingCode) ? `+${callingCode}` : callingCode,
      device: device === 'mobile' || device === 'desktop' ? device : null,
      figures,
      adoptedMs,
      targetMs,
      afterMs,
      at: new Date(now),
    });
  }

  /** The moment learned from every device's figures (EVERY_DEVICE), for a method completed outside the page. */
  async #pooled(
    method: VerificationMethod,
    callingCode: string,
    fixed: number,
  ): Promise<FallbackMoment | undefined> {
    if (cutOffBySwitch(method)) return undefined;
    return this.#learned(`${method}:${callingCode}:*`, method, callingCode, EVERY_DEVICE, fixed);
  }

  /**
   * The moment learned from the figures of `devices` summed (kept under `key` for matureFigures),
   * undefined while they hold too few samples.
   */
  async #learned(
    key: string,
    method: VerificationMethod,
    callingCode: string,
    devices: readonly (DeviceHint | undefined)[],
    fixed: number,
  ): Promise<FallbackMoment | undefined> {
    const settings = this.options.orchestration.fallback;
    if (settings === false) return undefined;
    const counts = sumMomentCounts(
      await Promise.all(
        devices.map((device) => this.stats.timeToVerify(method, callingCode, device, FALLBACK_FIGURES_DAYS)),
      ),
    );
    const then = this.#readBefore(key, counts, settings.ceilingMs);
    const figures = matureFigures(counts, then?.counts, this.options.clock() - (then?.at ?? 0));
    if (!learnsFallbackMoment(figures, settings)) return undefined;
    return { afterMs: fallbackAfterMs(figures, settings, fixed), learned: true };
  }

  /**
   * The newest read of this key at least `ceilingMs` ago over the same window of days, undefined
   * when none; remembers `counts` as read now. Per instance: an instance that just booted learns from
   * every step's figures until it has read for a ceiling.
   */
  #readBefore(key: string, counts: MomentCounts, ceilingMs: number): CountsRead | undefined {
    const now = this.options.clock();
    const day = dayName(now);
    const reads = (this.#reads.get(key) ?? []).filter((read) => read.day === day);
    const old = reads.filter((read) => read.at <= now - ceilingMs).at(-1);
    const kept = reads.filter((read) => read.at > now - ceilingMs);
    this.#reads.set(key, [...(old ? [old] : []), ...kept, { at: now, day, counts }]);
    return old;
  }
}
