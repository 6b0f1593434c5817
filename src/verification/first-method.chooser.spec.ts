import { describe, expect, it } from '@jest/globals';
import type { DeviceOutlook, MethodOutlook } from '../account/first-method.js';
import type { CellFigures } from '../account/operator-figures.js';
import {
  choiceLifeMs,
  FIRST_METHOD_MIN_TTL_MS,
  FIRST_METHOD_SETTLED_ENDED,
  FIRST_METHOD_TTL_MS,
} from './first-method.chooser.js';

/* How long a first-method choice stands (issue 47): in proportion to the ended sessions behind it. */

function outlook(method: MethodOutlook['method'], ended: number): MethodOutlook {
  const figures: CellFigures = {
    level: 'all',
    ended,
    verified: ended,
    completion: 1,
    delivery: null,
    buckets: [],
  };
  return { method, figures, priceMinor: 25, fallbackMs: 30_000 };
}
const device = (d: DeviceOutlook['device'], weight: number, ...ended: number[]): DeviceOutlook => ({
  device: d,
  weight,
  candidates: ended.map((n, i) => outlook(i === 0 ? 'sms' : 'reverse_flash_call', n)),
});
/** The evidence at which the proportional life meets the floor. */
const FLOOR_EVIDENCE = (FIRST_METHOD_MIN_TTL_MS * FIRST_METHOD_SETTLED_ENDED) / FIRST_METHOD_TTL_MS;

describe('first method: the life of a choice', () => {
  it('a choice on no figures (or no starts) stands FIRST_METHOD_MIN_TTL_MS', () => {
    expect(choiceLifeMs([])).toBe(FIRST_METHOD_MIN_TTL_MS);
    expect(choiceLifeMs([device('mobile', 0), device('desktop', 0)])).toBe(FIRST_METHOD_MIN_TTL_MS);
    // Starts, but no device's figures past the thin bound.
    expect(choiceLifeMs([device('mobile', 70), device('desktop', 30)])).toBe(FIRST_METHOD_MIN_TTL_MS);
  });

  it('grows with the ended sessions behind its thinnest device, up to FIRST_METHOD_TTL_MS', () => {
    expect(FLOOR_EVIDENCE).toBe(15);
    const life = (ended: number) =>
      choiceLifeMs([device('mobile', 70, 2 * ended), device('desktop', 30, ended)]);
    expect(life(FLOOR_EVIDENCE - 1)).toBe(FIRST_METHOD_MIN_TTL_MS);
    expect(life(FLOOR_EVIDENCE)).toBe(FIRST_METHOD_MIN_TTL_MS);
    expect(life(FLOOR_EVIDENCE + 1)).toBe(FIRST_METHOD_MIN_TTL_MS + 1000);
    expect(life(150)).toBe(FIRST_METHOD_TTL_MS / 2);
    expect(life(FIRST_METHOD_SETTLED_ENDED - 1)).toBe(FIRST_METHOD_TTL_MS - 1000);
    expect(life(FIRST_METHOD_SETTLED_ENDED)).toBe(FIRST_METHOD_TTL_MS);
    expect(life(FIRST_METHOD_SETTLED_ENDED + 1)).toBe(FIRST_METHOD_TTL_MS);
    // A device's candidates count together.
    expect(choiceLifeMs([device('mobile', 1, 100, 50)])).toBe(FIRST_METHOD_TTL_MS / 2);
  });

  it('a device with under a tenth of the ended sessions holds no choice short; at a tenth it does', () => {
    const settled = device('mobile', 900, 900);
    expect(choiceLifeMs([settled, device(undefined, 0, 99)])).toBe(FIRST_METHOD_TTL_MS);
    expect(choiceLifeMs([settled, device(undefined, 0, 100)])).toBe((FIRST_METHOD_TTL_MS * 100) / 300);
  });

  it('starts nobody ended (a device hint is the caller’s word) hold no choice short', () => {
    const settled = device('mobile', 900, FIRST_METHOD_SETTLED_ENDED);
    expect(choiceLifeMs([settled, device('desktop', 10_000, 0)])).toBe(FIRST_METHOD_TTL_MS);
    expect(choiceLifeMs([settled, device('desktop', 10_000)])).toBe(FIRST_METHOD_TTL_MS);
  });
});
