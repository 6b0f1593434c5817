import { describe, expect, it } from '@jest/globals';
import type { KnownVerificationMethod, Prices } from '../api/api.types.js';
import type { Sums } from '../account/method-figures.js';
import type { HealthState } from '../account/method-health.js';
import type { MethodHealthWatch } from '../account/method-health.service.js';
import type { MethodStats } from '../account/method-stats.service.js';
import { toPriceList, type PriceList } from '../account/price-book.js';
import type { DeviceHint } from '../core/journey.js';
import { VerificationLogger } from '../observability/verification-logger.js';
import { resolveVerificationOptions } from '../options/verification.options.js';
import { CapturingLogger } from '../../test/support/log-capture.js';
import { sums } from '../../test/support/method-stats.fixture.js';
import type { FallbackTiming } from './fallback-timing.js';
import { FIRST_METHOD_MIN_TTL_MS, FIRST_METHOD_TTL_MS, FirstMethodChooser } from './first-method.chooser.js';

/*
 * The order an `auto` start tries (issue 47): the method the operator's figures choose first, per device
 * and operator prefix, the demoted ones last; a choice stands its life on the module's clock, one read
 * serves the starts that ask meanwhile, and a failed read keeps the last choice.
 */

const NOON = Date.parse('2026-11-30T12:00:00Z');
const RUB = (amount: number) => ({ amount, currency: 'RUB' });
const PRICES: PriceList = toPriceList({
  prices: [
    { method: 'reverse_flash_call', price: RUB(0.25) },
    { method: 'sms', price: RUB(3) },
  ],
} satisfies Prices);
const ORDER: KnownVerificationMethod[] = ['sms', 'reverse_flash_call'];
const MSK = '+79851234567';
const SPB = '+79211234567';

/** A cell's counters: `verified` of them within the bucket `bucket` (TIME_TO_VERIFY_BUCKETS_MS), the rest expired. */
function cell(ended: number, verified: number, bucket: number, started = ended): Sums {
  const buckets = Array.from({ length: 12 }, (_, i) => (i === bucket ? verified : 0));
  return sums({ started, verified, expired: ended - verified, buckets });
}

/** Figures in which the cheap reverse call verifies more, sooner: it goes first. */
const REVERSE_WINS: Record<string, Sums> = { sms: cell(300, 240, 3), reverse_flash_call: cell(300, 270, 1) };
/** Figures in which few complete the reverse call: SMS goes first. */
const SMS_WINS: Record<string, Sums> = { sms: cell(300, 240, 3), reverse_flash_call: cell(300, 30, 1) };

interface Rig {
  now: number;
  /** The figures per method (every cell alike), or a failure of the store. */
  figures: Record<string, Sums> | Error;
  /** Per operator prefix cell (`7~921`), figures that replace `figures` there. */
  byOperator: Record<string, Record<string, Sums>>;
  /** Devices whose country cell counted no start (their share of the population is none). */
  unstarted: string[];
  health: Record<string, HealthState>;
  /** Every method's fallback moment (FallbackTiming.momentMs). */
  momentMs: number;
  reads: number;
  lines: string[];
  chooser: FirstMethodChooser;
  /** `prices: null`: no list read yet. */
  order(phone?: string, device?: DeviceHint, prices?: PriceList | null): Promise<string[]>;
}

function rig(
  exclude: Record<DeviceHint, KnownVerificationMethod[]> = { mobile: [], desktop: [] },
  maxSteps?: number,
): Rig {
  const host = new CapturingLogger();
  const r = {
    now: NOON,
    figures: REVERSE_WINS,
    byOperator: {},
    unstarted: [],
    health: {},
    momentMs: 30_000,
    reads: 0,
    lines: host.lines,
  } as unknown as Rig;
  const clock = () => r.now;
  const options = resolveVerificationOptions({
    api: { baseUrl: 'http://127.0.0.1:9', apiKey: 'key', apiSecret: 'secret-secret-secret' },
    clock,
    logger: host,
    orchestration: { exclude, ...(maxSteps === undefined ? {} : { maxSteps }) },
  });
  const stats = {
    cellSums: (method: string, cells: readonly string[]) => {
      r.reads += 1;
      if (r.figures instanceof Error) return Promise.reject(r.figures);
      return Promise.resolve(
        cells.map((name) => {
          const [group, device] = name.split('.') as [string, string];
          const sums = (r.byOperator[group] ?? r.figures)[method] ?? cell(0, 0, 0);
          // The country's cell (`7~.<device>`): its starts weigh the device.
          return group === '7~' && r.unstarted.includes(device) ? { ...sums, started: 0 } : sums;
        }),
      );
    },
  } as unknown as MethodStats;
  const health = {
    refresh: (method: string) => Promise.resolve(r.health[method] ?? 'healthy'),
  } as unknown as MethodHealthWatch;
  const fallback = { momentMs: () => Promise.resolve(r.momentMs) } as unknown as FallbackTiming;
  const logger = new VerificationLogger(options);
  r.chooser = new FirstMethodChooser(clock, stats, health, fallback, logger, options.orchestration);
  r.order = (phone = MSK, device = 'mobile', prices: PriceList | null = PRICES) =>
    r.chooser.reorder(ORDER, prices ?? undefined, phone, device);
  return r;
}

describe('FirstMethodChooser: the first method of an auto start', () => {
  it('puts first the method the figures choose, for every device and none; thin figures keep the order given', async () => {
    const r = rig();
    expect(await r.order(MSK, 'mobile')).toStrictEqual(['reverse_flash_call', 'sms']);
    expect(await r.order(MSK, 'desktop')).toStrictEqual(['reverse_flash_call', 'sms']);
    expect(await r.order(MSK, undefined)).toStrictEqual(['reverse_flash_call', 'sms']);
    const thin = rig();
    thin.figures = { sms: cell(29, 29, 3), reverse_flash_call: cell(29, 29, 1) };
    expect(await thin.order()).toStrictEqual(ORDER);
    // One method thin, the other settled: the settled one is judged alone, no read failed.
    const half = rig();
    half.figures = { sms: cell(300, 240, 3), reverse_flash_call: cell(29, 29, 1) };
    expect(await half.order()).toStrictEqual(ORDER);
    expect(half.lines).toStrictEqual([]);
  });

  it('judges each method alone where a journey has one step (`maxSteps: 1`): a cheap one that verifies fewer than SMS goes first only when SMS follows it', async () => {
    // The reverse call alone verifies 2 in 3, SMS 4 in 5; the reverse call then SMS (which verified 90 of the
    // reverse call's 100 unverified) verify more than SMS alone.
    const figures = { sms: cell(300, 240, 3), reverse_flash_call: { ...cell(300, 200, 1), rescued: 90 } };
    const [two, one] = [rig(undefined, 2), rig(undefined, 1)];
    two.figures = one.figures = figures;
    expect(await two.order(MSK, 'mobile')).toStrictEqual(['reverse_flash_call', 'sms']);
    expect(await one.order(MSK, 'mobile')).toStrictEqual(['sms', 'reverse_flash_call']);
    expect(await one.order(MSK, 'desktop')).toStrictEqual(['sms', 'reverse_flash_call']);
  });

  it('leaves out a method the device hint excludes, and one the price list lacks', async () => {
    const r = rig({ mobile: [], desktop: ['reverse_flash_call'] });
    expect(await r.order(MSK, 'desktop')).toStrictEqual(['sms', 'reverse_flash_call']);
    expect(await r.order(MSK, 'mobile')).toStrictEqual(['reverse_flash_call', 'sms']);
    expect(await r.order(MSK, undefined)).toStrictEqual(['reverse_flash_call', 'sms']);
    const unpriced = rig();
    const smsOnly = toPriceList({ prices: [{ method: 'sms', price: RUB(3) }] });
    expect(await unpriced.order(MSK, 'mobile', smsOnly)).toStrictEqual(ORDER);
  });

  it('without figures to choose from, a desktop page does not start with the reverse call; a phone’s page does', async () => {
    const r = rig();
    r.figures = { sms: cell(29, 29, 3), reverse_flash_call: cell(29, 29, 1) };
    const callFirst: KnownVerificationMethod[] = ['reverse_flash_call', 'sms'];
    expect(await r.chooser.reorder(callFirst, PRICES, MSK, 'desktop')).toStrictEqual([
      'sms',
      'reverse_flash_call',
    ]);
    expect(await r.chooser.reorder(callFirst, PRICES, MSK, 'mobile')).toStrictEqual(callFirst);
    // Once figures choose, they decide for the desktop too.
    r.figures = REVERSE_WINS;
    r.now += FIRST_METHOD_MIN_TTL_MS;
    expect(await r.chooser.reorder(callFirst, PRICES, MSK, 'desktop')).toStrictEqual(callFirst);
  });

  it('a device whose country counted no start gets no choice: the order given stands for it', async () => {
    const r = rig();
    r.unstarted = ['desktop'];
    expect(await r.order(MSK, 'desktop')).toStrictEqual(ORDER);
    expect(await r.order(MSK, 'mobile')).toStrictEqual(['reverse_flash_call', 'sms']);
  });

  it('chooses per operator prefix: another operator’s figures choose their own first method', async () => {
    const r = rig();
    r.byOperator['7~921'] = SMS_WINS;
    expect(await r.order(SPB)).toStrictEqual(['sms', 'reverse_flash_call']);
    expect(await r.order(MSK)).toStrictEqual(['reverse_flash_call', 'sms']);
  });

  it('chooses per list of methods offered: a purpose offering fewer is never handed another’s choice', async () => {
    const r = rig();
    const offering = (order: KnownVerificationMethod[]) => r.chooser.reorder(order, PRICES, MSK, 'mobile');
    // One purpose offers both and the figures put the reverse call first; another, on the same operator
    // prefix within that choice's life, offers SMS alone: it gets SMS alone.
    expect(await offering(ORDER)).toStrictEqual(['reverse_flash_call', 'sms']);
    expect(await offering(['sms'])).toStrictEqual(['sms']);
    // And the other way round: a choice made among SMS alone does not stand for a purpose offering both.
    const other = rig();
    const smsFirst = (order: KnownVerificationMethod[]) =>
      other.chooser.reorder(order, PRICES, MSK, 'mobile');
    expect(await smsFirst(['sms'])).toStrictEqual(['sms']);
    expect(await smsFirst(ORDER)).toStrictEqual(['reverse_flash_call', 'sms']);
  });

  it('puts a method demoted on the prefix last, whatever its figures', async () => {
    const r = rig();
    r.health = { reverse_flash_call: 'demoted' };
    expect(await r.order(MSK, 'mobile')).toStrictEqual(['sms', 'reverse_flash_call']);
    r.health = { sms: 'demoted' };
    r.now += FIRST_METHOD_TTL_MS;
    expect(await r.order(MSK, 'mobile')).toStrictEqual(['reverse_flash_call', 'sms']);
  });

  it('a method demoted within the life of a choice that put it first goes last at once, and once', async () => {
    const r = rig();
    expect(await r.order(MSK, 'mobile')).toStrictEqual(['reverse_flash_call', 'sms']);
    r.health = { reverse_flash_call: 'demoted' };
    r.now += 1;
    expect(await r.order(MSK, 'mobile')).toStrictEqual(['sms', 'reverse_flash_call']);
    expect(await r.order(MSK, 'desktop')).toStrictEqual(['sms', 'reverse_flash_call']);
  });
});

describe('FirstMethodChooser: a first method judged with the step the journey falls back to', () => {
  const THREE = toPriceList({
    prices: [
      { method: 'reverse_flash_call', price: RUB(0.25) },
      { method: 'flash_call', price: RUB(0.8) },
      { method: 'msgr1_otp', price: RUB(0.9) },
    ],
  } satisfies Prices);
  // No SMS figures. The reverse call: 30 % verified, nearly all of the rest verified after the switch so far.
  const FIGURES: Record<string, Sums> = {
    reverse_flash_call: { ...cell(300, 90, 1), rescued: 200 },
    flash_call: cell(300, 150, 1),
    msgr1_otp: cell(300, 237, 1),
  };

  it('the next method of the order offered: the reverse call first only where the messenger follows it', async () => {
    const r = rig();
    r.figures = FIGURES;
    r.momentMs = 10_000;
    const start = (order: KnownVerificationMethod[]) => r.chooser.reorder(order, THREE, MSK, 'mobile');
    // Then the flash call, which verifies half: fewer verified than the messenger alone.
    expect(await start(['reverse_flash_call', 'flash_call', 'msgr1_otp'])).toStrictEqual([
      'msgr1_otp',
      'reverse_flash_call',
      'flash_call',
    ]);
    expect(await start(['reverse_flash_call', 'msgr1_otp', 'flash_call'])).toStrictEqual([
      'reverse_flash_call',
      'msgr1_otp',
      'flash_call',
    ]);
  });

  it('a method the device hint excludes is never the next step: the one after it is', async () => {
    const r = rig({ mobile: ['flash_call'], desktop: [] });
    r.figures = FIGURES;
    r.momentMs = 10_000;
    const order: KnownVerificationMethod[] = ['reverse_flash_call', 'flash_call', 'msgr1_otp'];
    expect((await r.chooser.reorder(order, THREE, MSK, 'mobile'))[0]).toBe('reverse_flash_call');
    expect((await r.chooser.reorder(order, THREE, MSK, 'desktop'))[0]).toBe('msgr1_otp');
  });
});

describe('FirstMethodChooser: how long a choice stands (module clock)', () => {
  it('made without a price list, the order given stands FIRST_METHOD_MIN_TTL_MS, then the figures choose', async () => {
    const r = rig();
    expect(await r.order(MSK, 'mobile', null)).toStrictEqual(ORDER);
    r.now += FIRST_METHOD_MIN_TTL_MS - 1;
    expect(await r.order()).toStrictEqual(ORDER);
    r.now += 1;
    expect(await r.order()).toStrictEqual(['reverse_flash_call', 'sms']);
  });

  it('made on settled figures, it stands FIRST_METHOD_TTL_MS: one tick before, the old choice; at the bound, the new', async () => {
    const r = rig();
    expect(await r.order()).toStrictEqual(['reverse_flash_call', 'sms']);
    r.figures = SMS_WINS;
    r.now += FIRST_METHOD_TTL_MS - 1;
    expect(await r.order()).toStrictEqual(['reverse_flash_call', 'sms']);
    r.now += 1;
    expect(await r.order()).toStrictEqual(['sms', 'reverse_flash_call']);
  });

  it('one read of the figures serves the starts that ask while it runs', async () => {
    const r = rig();
    const answers = await Promise.all([r.order(), r.order(), r.order()]);
    expect(answers).toStrictEqual(Array.from({ length: 3 }, () => ['reverse_flash_call', 'sms']));
    // Two methods × three devices (mobile, desktop, none): one read each of the operator's cell and of the country's.
    expect(r.reads).toBe(12);
    r.now += FIRST_METHOD_TTL_MS;
    await Promise.all([r.order(), r.order()]);
    expect(r.reads).toBe(24);
  });

  it('a failed read is logged and keeps the last choice for FIRST_METHOD_TTL_MS; the first failed read keeps the order', async () => {
    const r = rig();
    expect(await r.order()).toStrictEqual(['reverse_flash_call', 'sms']);
    r.now += FIRST_METHOD_TTL_MS;
    r.figures = new Error('store down');
    expect(await r.order()).toStrictEqual(['reverse_flash_call', 'sms']);
    const warned = r.lines.filter((line) => line.includes('operator figures could not be read'));
    expect(warned).toHaveLength(1);
    expect(warned[0]).toMatch(
      /^warn orchestration: operator figures could not be read; the first method stands/,
    );
    expect(warned[0]).toContain('store down');
    r.figures = SMS_WINS;
    r.now += FIRST_METHOD_TTL_MS - 1;
    expect(await r.order()).toStrictEqual(['reverse_flash_call', 'sms']);
    r.now += 1;
    expect(await r.order()).toStrictEqual(['sms', 'reverse_flash_call']);

    const cold = rig();
    cold.figures = new Error('store down');
    expect(await cold.order()).toStrictEqual(ORDER);
  });
});
