import { describe, expect, it } from '@jest/globals';
import { TIME_TO_VERIFY_BUCKETS_MS } from '../core/duration-histogram.js';
import {
  CARRIED_PRIOR_ENDS,
  carriedAfter,
  chooseFirstMethods,
  expectedOf,
  REFERENCE_MEDIAN_PRIOR_MS,
  standInFor,
  SWITCH_LEAVE_SHARE,
  unchosenOrder,
  type MethodOutlook,
} from './first-method.js';
import type { CellFigures } from './operator-figures.js';

/* The first method per device (issue 47): cost per verified user under SMS's verified users and median. */

/** Figures of `ended` sessions, `completion` of them verified, all in the bucket ending at `atMs`. */
function figures(
  completion: number,
  atMs: number,
  delivery: number | null = null,
  ended = 1000,
): CellFigures {
  const buckets = Array<number>(TIME_TO_VERIFY_BUCKETS_MS.length + 1).fill(0);
  buckets[TIME_TO_VERIFY_BUCKETS_MS.indexOf(atMs)] = Math.round(completion * ended);
  return {
    level: 'country',
    ended,
    verified: Math.round(completion * ended),
    completion,
    delivery,
    buckets,
  };
}
const sms: MethodOutlook = {
  method: 'sms',
  figures: figures(0.85, 30_000, 0.98),
  priceMinor: 300,
  fallbackMs: 60_000,
};
const reverse = (completion: number, atMs: number): MethodOutlook => ({
  method: 'reverse_flash_call',
  figures: figures(completion, atMs),
  priceMinor: 25,
  fallbackMs: 30_000,
});

describe('first method', () => {
  it('a switch costs SWITCH_LEAVE_SHARE of the users who reach it', () => {
    // Nobody completes the reverse call: every user switches, 10 % of them leave.
    const none = expectedOf(reverse(0, 20_000), sms, 30_000);
    expect(none.verified).toBeCloseTo(0.85 * (1 - SWITCH_LEAVE_SHARE));
  });

  it('judges every candidate alone in journeys of one step (maxSteps 1), with the step it falls back to in longer ones', () => {
    const devices = [{ device: 'mobile' as const, weight: 700, candidates: [sms, reverse(0.7, 20_000)] }];
    expect(chooseFirstMethods(devices, 2).get('mobile')).toBe('reverse_flash_call');
    // Alone, the reverse call verifies 0.7 against SMS's 0.85: SMS first.
    expect(chooseFirstMethods(devices, 1).get('mobile')).toBe('sms');
  });

  it('puts the reverse call first where it is cheaper per verified user and no slower', () => {
    const chosen = chooseFirstMethods([
      { device: 'mobile', weight: 700, candidates: [sms, reverse(0.7, 20_000)] },
    ]);
    expect(chosen.get('mobile')).toBe('reverse_flash_call');
  });

  it('keeps SMS first where the other would verify fewer users (a desktop that rarely completes)', () => {
    const chosen = chooseFirstMethods([
      { device: 'desktop', weight: 600, candidates: [sms, reverse(0.1, 20_000)] },
    ]);
    expect(chosen.get('desktop')).toBe('sms');
  });

  it('keeps SMS first where no other method qualifies, whatever the order: SMS is judged alone, not with the step after it', () => {
    // After SMS, the reverse call would verify more users, but after SMS's median: judged with it, SMS would not qualify.
    for (const order of [undefined, ['sms', 'reverse_flash_call'], ['reverse_flash_call', 'sms']] as const) {
      const device = { device: 'mobile' as const, weight: 1, candidates: [sms, reverse(0.3, 20_000)] };
      expect(chooseFirstMethods([{ ...device, ...(order ? { order } : {}) }]).get('mobile')).toBe('sms');
    }
  });

  it('keeps SMS first where the other, fast enough, would verify fewer users than SMS alone', () => {
    // SMS: 40 % verified within 10 s, 45 % within 2 minutes (its median ~92 s, a budget the other meets).
    const buckets = Array<number>(TIME_TO_VERIFY_BUCKETS_MS.length + 1).fill(0);
    buckets[TIME_TO_VERIFY_BUCKETS_MS.indexOf(10_000)] = 400;
    buckets[TIME_TO_VERIFY_BUCKETS_MS.indexOf(120_000)] = 450;
    const slowSms = { ...sms, figures: { ...sms.figures, buckets } };
    // 30 % within 5 s, then SMS: 0.3 + 0.7 × 0.9 × 0.85 = 0.8355 verified, under SMS's 0.85, cheaper per verified.
    const fast = { ...reverse(0.3, 5_000), fallbackMs: 10_000 };
    expect(
      chooseFirstMethods([{ device: 'mobile', weight: 1, candidates: [slowSms, fast] }]).get('mobile'),
    ).toBe('sms');
    // At 0.37 (0.37 + 0.63 × 0.765 = 0.852): as many verified, cheaper: first.
    const better = { ...reverse(0.37, 5_000), fallbackMs: 10_000 };
    expect(
      chooseFirstMethods([{ device: 'mobile', weight: 1, candidates: [slowSms, better] }]).get('mobile'),
    ).toBe('reverse_flash_call');
  });

  it('keeps SMS first where the other would push the median past SMS’s', () => {
    // Completes often, but late: its users verify after SMS's median.
    const slow = { ...reverse(0.9, 45_000), fallbackMs: 60_000 };
    expect(chooseFirstMethods([{ device: 'mobile', weight: 1, candidates: [sms, slow] }]).get('mobile')).toBe(
      'sms',
    );
    // The population's median: a fast device lets a slower one go first where it saves.
    const fast = { device: 'mobile' as const, weight: 700, candidates: [sms, reverse(0.7, 10_000)] };
    const chosen = chooseFirstMethods([
      fast,
      { device: 'desktop', weight: 300, candidates: [sms, reverse(0.5, 45_000)] },
    ]);
    expect(chosen.get('mobile')).toBe('reverse_flash_call');
  });

  it('a method charged on delivery without delivery figures yet is assumed charged for every start, never free', () => {
    // As SMS verifies, at 310 a start: 310 + 0.15 × 0.9 × 294 for 0.965 verified (362) against SMS's 294 / 0.85 (346).
    const flash = (delivery: number | null): MethodOutlook => ({
      method: 'flash_call',
      figures: figures(0.85, 20_000, delivery),
      priceMinor: 310,
      fallbackMs: 30_000,
    });
    expect(expectedOf(flash(null), sms, 30_000).costMinor).toBeCloseTo(310 + 0.15 * 0.9 * 300 * 0.98);
    for (const delivery of [null, 1])
      expect(
        chooseFirstMethods([{ device: 'mobile', weight: 1, candidates: [sms, flash(delivery)] }]).get(
          'mobile',
        ),
      ).toBe('sms');
    // Delivered to half: charged for half, first.
    expect(
      chooseFirstMethods([{ device: 'mobile', weight: 1, candidates: [sms, flash(0.5)] }]).get('mobile'),
    ).toBe('flash_call');
  });

  describe('without SMS figures for a device (its candidate most complete alone, SMS’s median assumed)', () => {
    const flash: MethodOutlook = {
      method: 'flash_call',
      figures: figures(0.72, 20_000, 0.85),
      priceMinor: 80,
      fallbackMs: 30_000,
    };

    it('the stand-in is the candidate its users complete the most', () => {
      expect(standInFor([reverse(0.3, 30_000), flash])?.method).toBe('flash_call');
      expect(standInFor([reverse(0.8, 30_000), flash])?.method).toBe('reverse_flash_call');
      expect(standInFor([])).toBeUndefined();
    });

    it('does not put first a method few of the device’s users complete', () => {
      // 0.1 + 0.9 × 0.9 × 0.72 (0.683) verified against the flash call's 0.72 alone.
      const desktop = { device: 'desktop' as const, weight: 1, candidates: [reverse(0.1, 30_000), flash] };
      expect(chooseFirstMethods([desktop]).get('desktop')).toBe('flash_call');
    });

    it('keeps the cheaper method first where as many are verified with it, within SMS’s assumed median', () => {
      // 0.4 by the call (within its moment), the rest 0.6 × 0.9 × 0.72 = 0.389: 0.789 ≥ 0.72; 0.4 within 30 s.
      const mobile = { device: 'mobile' as const, weight: 1, candidates: [reverse(0.4, 20_000), flash] };
      expect(chooseFirstMethods([mobile]).get('mobile')).toBe('reverse_flash_call');
      // The most completed stands in: its own median (past REFERENCE_MEDIAN_PRIOR_MS) is the budget.
      const slow = { ...reverse(0.9, 45_000), fallbackMs: 60_000 };
      expect(chooseFirstMethods([{ ...mobile, candidates: [slow, flash] }]).get('mobile')).toBe(
        'reverse_flash_call',
      );
    });

    it('does not put first a method completed after SMS’s assumed median (a budget without SMS figures)', () => {
      // As many verified (0.7 + 0.3 × 0.9 × 0.72 = 0.894 ≥ 0.72), but none within 30 s: the median past it.
      const late = { ...reverse(0.7, 45_000), fallbackMs: 60_000 };
      const mobile = { device: 'mobile' as const, weight: 1, candidates: [late, flash] };
      expect(REFERENCE_MEDIAN_PRIOR_MS).toBe(30_000);
      expect(chooseFirstMethods([mobile]).get('mobile')).toBe('flash_call');
      // Completed by 30 s (the bucket ending at the prior): first again.
      const inTime = { ...reverse(0.7, 30_000), fallbackMs: 60_000 };
      expect(chooseFirstMethods([{ ...mobile, candidates: [inTime, flash] }]).get('mobile')).toBe(
        'reverse_flash_call',
      );
    });

    it('counts the users who leave at the switch', () => {
      // Fast enough (5 s, switched at 10 s): 0.2 + 0.8 × 0.9 × 0.72 = 0.7184 < 0.72: first only if nobody left (0.776).
      const call = (completion: number) => ({ ...reverse(completion, 5_000), fallbackMs: 10_000 });
      const device = { device: 'desktop' as const, weight: 1, candidates: [call(0.2), flash] };
      expect(chooseFirstMethods([device]).get('desktop')).toBe('flash_call');
      const atLeast = { ...device, candidates: [call(0.21), flash] };
      expect(chooseFirstMethods([atLeast]).get('desktop')).toBe('reverse_flash_call');
    });

    it('weighs the devices together: one device’s surplus of verified users carries another’s shortfall', () => {
      // Mobile: 0.7 + 0.3 × 0.9 × 0.72 = 0.894 against 0.72; desktop: 0.683 against 0.72 (both fast:
      // within 5 s, switched at 10 s, so that only the verified users decide).
      const call = (completion: number) => ({ ...reverse(completion, 5_000), fallbackMs: 10_000 });
      const mobile = { device: 'mobile' as const, weight: 900, candidates: [call(0.7), flash] };
      const desktop = { device: 'desktop' as const, weight: 100, candidates: [call(0.1), flash] };
      const chosen = chooseFirstMethods([mobile, desktop]);
      expect(chosen.get('mobile')).toBe('reverse_flash_call');
      expect(chosen.get('desktop')).toBe('reverse_flash_call');
      // Desktop-heavy (9,000 × 0.037 > 900 × 0.174): the desktop's shortfall is no longer covered.
      const heavy = chooseFirstMethods([mobile, { ...desktop, weight: 9000 }]);
      expect(heavy.get('mobile')).toBe('reverse_flash_call');
      expect(heavy.get('desktop')).toBe('flash_call');
    });

    it('leaves the median to the devices with SMS figures, and a device without figures out', () => {
      const timed = { device: 'mobile' as const, weight: 1, candidates: [sms, reverse(0.7, 20_000)] };
      // Mobile's surplus over SMS (0.93 against 0.85) does not cover 5 × 0.037 on the desktop.
      const untimed = { device: 'desktop' as const, weight: 5, candidates: [reverse(0.1, 20_000), flash] };
      const chosen = chooseFirstMethods([timed, untimed, { device: undefined, weight: 5, candidates: [] }]);
      expect(chosen.get('mobile')).toBe('reverse_flash_call');
      expect(chosen.get('desktop')).toBe('flash_call');
      expect(chosen.has(undefined)).toBe(false);
    });

    it('an assumed median only restrains: a device fast within it carries no other past SMS’s median', () => {
      // Mobile: completed often, after SMS's median (none of 0.96 within 30 s: 0.48 short).
      const slow = { ...reverse(0.9, 45_000), fallbackMs: 60_000 };
      const timed = { device: 'mobile' as const, weight: 1, candidates: [sms, slow] };
      // Desktop: 0.7 of 0.894 within the assumed 30 s, beyond half; counted as half, however many.
      const untimed = { device: 'desktop' as const, weight: 1, candidates: [reverse(0.7, 20_000), flash] };
      for (const weight of [1, 3, 100]) {
        const chosen = chooseFirstMethods([timed, { ...untimed, weight }]);
        expect(chosen.get('mobile')).toBe('sms');
        expect(chosen.get('desktop')).toBe('reverse_flash_call');
      }
      // Measured medians do carry each other (SMS's figures on both devices).
      const measured = { device: 'desktop' as const, weight: 3, candidates: [sms, reverse(0.7, 5_000)] };
      expect(chooseFirstMethods([timed, measured]).get('mobile')).toBe('reverse_flash_call');
    });
  });

  describe('a switch’s cost in users, learned: the share of a method’s unverified users a later step verifies', () => {
    /** The method's figures with `rescued` of its unverified sessions verified by a later step. */
    const withRescued = (m: MethodOutlook, rescued: number): MethodOutlook => ({
      ...m,
      figures: { ...m.figures, rescued },
    });
    const flash: MethodOutlook = {
      method: 'flash_call',
      figures: figures(0.5, 10_000, 0.85),
      priceMinor: 80,
      fallbackMs: 30_000,
    };

    it('thin or not counted: the reference’s completion less SWITCH_LEAVE_SHARE', () => {
      expect(carriedAfter(flash, sms)).toBeCloseTo(0.85 * (1 - SWITCH_LEAVE_SHARE));
      // No unverified session yet: the prior alone.
      const none = { ...flash, figures: { ...figures(1, 10_000), rescued: 0 } };
      expect(carriedAfter(none, sms)).toBeCloseTo(0.85 * (1 - SWITCH_LEAVE_SHARE));
    });

    it('a method charged whatever happens: its unverified users proven, the leavers among them', () => {
      // 500 unverified, 100 of them verified later (the rest left or failed): the prior weighs 20 of 520.
      const learned = carriedAfter(withRescued(flash, 100), sms);
      const prior = 0.85 * (1 - SWITCH_LEAVE_SHARE);
      expect(learned).toBeCloseTo((100 + CARRIED_PRIOR_ENDS * prior) / (500 + CARRIED_PRIOR_ENDS));
      // As many as the prior says: no change.
      expect(carriedAfter(withRescued(flash, 500 * prior), sms)).toBeCloseTo(prior);
    });

    it('a method charged on proof: those who leave without switching stay assumed, before the learned share', () => {
      const call = reverse(0.3, 10_000); // 700 unverified: those who switched, proven
      const half = carriedAfter(withRescued(call, 350), sms);
      expect(half).toBeCloseTo((1 - SWITCH_LEAVE_SHARE) * ((350 + CARRIED_PRIOR_ENDS * 0.85) / 720));
      expect(carriedAfter(withRescued(call, 0), sms)).toBeLessThan(0.03);
    });

    it('never above the prior: a later step’s success is counted at once, its failure at the expiry', () => {
      const call = reverse(0.3, 10_000);
      expect(carriedAfter(withRescued(call, 700), sms)).toBeCloseTo((1 - SWITCH_LEAVE_SHARE) * 0.85);
      expect(carriedAfter(withRescued(flash, 500), sms)).toBeCloseTo(0.85 * (1 - SWITCH_LEAVE_SHARE));
    });

    it('a first method whose switched users rarely verify after it goes first no more', () => {
      // 0.3 + 0.7 × 0.9 × 0.85 ≈ 0.836 < 0.85 by the prior; with every switched user verified later, more.
      const call = { ...reverse(0.3, 5_000), fallbackMs: 10_000 };
      const mobile = (c: MethodOutlook) => [{ device: 'mobile' as const, weight: 1, candidates: [sms, c] }];
      expect(chooseFirstMethods(mobile(withRescued(call, 700))).get('mobile')).toBe('sms');
      const cheap = { ...reverse(0.5, 5_000), fallbackMs: 10_000 };
      expect(chooseFirstMethods(mobile(withRescued(cheap, 500))).get('mobile')).toBe('reverse_flash_call');
      // The same method, whose users left after switching (few verified later): SMS first.
      expect(chooseFirstMethods(mobile(withRescued(cheap, 150))).get('mobile')).toBe('sms');
      expect(expectedOf(withRescued(cheap, 150), sms, 30_000).verified).toBeLessThan(
        expectedOf(withRescued(cheap, 500), sms, 30_000).verified,
      );
    });
  });
});

describe('unchosenOrder: a device without a chosen first method', () => {
  const PRICE_ORDER = ['reverse_flash_call', 'flash_call', 'msgr1_otp', 'sms'] as const;

  it('a desktop page starts with the first method not completed by a call from the phone; the rest keep their order', () => {
    expect(unchosenOrder(PRICE_ORDER, 'desktop')).toStrictEqual([
      'flash_call',
      'reverse_flash_call',
      'msgr1_otp',
      'sms',
    ]);
    // Another shape: the call first, SMS the only other method.
    expect(unchosenOrder(['reverse_flash_call', 'sms'], 'desktop')).toStrictEqual([
      'sms',
      'reverse_flash_call',
    ]);
  });

  it('a phone’s page, or no device hint, keeps the order given', () => {
    expect(unchosenOrder(PRICE_ORDER, 'mobile')).toStrictEqual([...PRICE_ORDER]);
    expect(unchosenOrder(PRICE_ORDER, undefined)).toStrictEqual([...PRICE_ORDER]);
  });

  it('an order already starting with a code method, one with the call second, or the call alone stands', () => {
    expect(unchosenOrder(['sms', 'reverse_flash_call'], 'desktop')).toStrictEqual([
      'sms',
      'reverse_flash_call',
    ]);
    expect(unchosenOrder(['flash_call', 'reverse_flash_call', 'sms'], 'desktop')).toStrictEqual([
      'flash_call',
      'reverse_flash_call',
      'sms',
    ]);
    expect(unchosenOrder(['reverse_flash_call'], 'desktop')).toStrictEqual(['reverse_flash_call']);
    expect(unchosenOrder([], 'desktop')).toStrictEqual([]);
  });

  it('a method the desktop hint excludes neither leads nor goes first: the first allowed code method does', () => {
    expect(unchosenOrder(PRICE_ORDER, 'desktop', ['flash_call'])).toStrictEqual([
      'msgr1_otp',
      'reverse_flash_call',
      'flash_call',
      'sms',
    ]);
    // The excluded method leads the order: the call is the first allowed, so the next code method goes first.
    expect(
      unchosenOrder(['flash_call', 'reverse_flash_call', 'sms'], 'desktop', ['flash_call']),
    ).toStrictEqual(['sms', 'flash_call', 'reverse_flash_call']);
    // Only the call allowed, or a code method leading the allowed ones: the order stands.
    expect(unchosenOrder(['reverse_flash_call', 'sms'], 'desktop', ['sms'])).toStrictEqual([
      'reverse_flash_call',
      'sms',
    ]);
    expect(unchosenOrder(['reverse_flash_call', 'sms'], 'mobile', ['reverse_flash_call'])).toStrictEqual([
      'reverse_flash_call',
      'sms',
    ]);
  });
});
