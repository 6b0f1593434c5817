import { describe, expect, it } from '@jest/globals';
import { TIME_TO_VERIFY_BUCKETS_MS } from '../core/duration-histogram.js';
import type { VerificationMethod } from '../core/verification-method.js';
import { chooseFirstMethods, type MethodOutlook } from './first-method.js';
import type { CellFigures } from './operator-figures.js';

/*
 * The step a first method falls back to is the next method of the journey's order (issue 47): a cheap first
 * method is judged by what its users get after the switch, not by the best method the device has.
 */

/** `ended` sessions, `completion` of them verified within 10 s; `rescued` of the rest verified by a later step. */
function figures(completion: number, rescued = 0, ended = 1000): CellFigures {
  const buckets = Array<number>(TIME_TO_VERIFY_BUCKETS_MS.length + 1).fill(0);
  buckets[TIME_TO_VERIFY_BUCKETS_MS.indexOf(10_000)] = Math.round(completion * ended);
  const verified = Math.round(completion * ended);
  return { level: 'country', ended, verified, completion, delivery: null, buckets, rescued };
}
const outlook = (method: VerificationMethod, f: CellFigures, priceMinor: number): MethodOutlook => ({
  method,
  figures: f,
  priceMinor,
  fallbackMs: 10_000,
});
// No SMS figures (never reached): the messenger code, the most completed, stands in for SMS.
// The reverse call: 30 % verified, nearly all of the rest verified after the switch so far.
const reverse = outlook('reverse_flash_call', figures(0.3, 650), 25);
const flash = outlook('flash_call', figures(0.5), 80);
const messenger = outlook('msgr1_otp', figures(0.79), 90);
const mobile = (order?: VerificationMethod[]) => ({
  device: 'mobile' as const,
  weight: 1,
  candidates: [reverse, flash, messenger],
  ...(order ? { order } : {}),
});

describe('the first method, judged with the step its order falls back to', () => {
  it('a cheap first method whose next step verifies few of the rest goes first no more', () => {
    // Next, the flash call: 0.3 + 0.7 × 0.9 × 0.5 = 0.615 verified, under the messenger's 0.79 alone.
    const order: VerificationMethod[] = ['reverse_flash_call', 'flash_call', 'msgr1_otp'];
    expect(chooseFirstMethods([mobile(order)]).get('mobile')).toBe('msgr1_otp');
  });

  it('the same first method goes first where the next step is the one that verifies most', () => {
    // Next, the messenger: 0.3 + 0.7 × 0.9 × 0.79 = 0.798 ≥ 0.79, at a fraction of its price.
    const order: VerificationMethod[] = ['reverse_flash_call', 'msgr1_otp', 'flash_call'];
    expect(chooseFirstMethods([mobile(order)]).get('mobile')).toBe('reverse_flash_call');
  });

  it('without an order, or where the next method has no figures yet, the judged method follows', () => {
    expect(chooseFirstMethods([mobile()]).get('mobile')).toBe('reverse_flash_call');
    const unknownNext: VerificationMethod[] = ['reverse_flash_call', 'sms', 'flash_call', 'msgr1_otp'];
    expect(chooseFirstMethods([mobile(unknownNext)]).get('mobile')).toBe('reverse_flash_call');
  });

  it('the next step is the order’s first other method, wherever the first one stands in it', () => {
    // A start moves the chosen method to the head: [reverse, messenger, flash]; its next is the messenger.
    const order: VerificationMethod[] = ['msgr1_otp', 'reverse_flash_call', 'flash_call'];
    expect(chooseFirstMethods([mobile(order)]).get('mobile')).toBe('reverse_flash_call');
    // Behind the flash call, the same order puts the reverse call after the flash call, and it fails.
    const behind: VerificationMethod[] = ['flash_call', 'reverse_flash_call', 'msgr1_otp'];
    expect(chooseFirstMethods([mobile(behind)]).get('mobile')).toBe('msgr1_otp');
  });
});

describe('the next step, on the edges of the order (attack 225)', () => {
  it('an empty order is an order without a next method with figures: the judged method follows, no crash', () => {
    expect(() => chooseFirstMethods([mobile([])])).not.toThrow();
    expect(chooseFirstMethods([mobile([])]).get('mobile')).toBe('reverse_flash_call');
  });

  it('a first method absent from the order falls back to the order’s head, not to the judged method', () => {
    // The reverse call is not listed: its next step is the flash call (0.615 < 0.79), so it goes first no more.
    expect(chooseFirstMethods([mobile(['flash_call', 'msgr1_otp'])]).get('mobile')).toBe('msgr1_otp');
    expect(chooseFirstMethods([mobile(['msgr1_otp', 'flash_call'])]).get('mobile')).toBe(
      'reverse_flash_call',
    );
  });

  it('each device is judged with its own order: one without an order does not borrow another’s', () => {
    const desktop = { ...mobile(), device: 'desktop' as const };
    const chosen = chooseFirstMethods([mobile(['reverse_flash_call', 'flash_call', 'msgr1_otp']), desktop]);
    expect(chosen.get('mobile')).toBe('msgr1_otp');
    expect(chosen.get('desktop')).toBe('reverse_flash_call');
    const swapped = chooseFirstMethods([
      { ...mobile(), device: 'mobile' as const },
      {
        ...mobile(['reverse_flash_call', 'flash_call', 'msgr1_otp']),
        device: 'desktop' as const,
      },
    ]);
    expect(swapped.get('mobile')).toBe('reverse_flash_call');
    expect(swapped.get('desktop')).toBe('msgr1_otp');
  });
});
