import { describe, expect, it } from '@jest/globals';
import { proofReserveRefuses, type ProofTerms } from './proof-reserve.js';

/** A 1,000 RUB cap in kopecks: the reserve is its last 200 RUB, 20 RUB a caller, 100 RUB kept as the floor. */
const CAP = 100_000;
const stranger: ProofTerms = { callers: ['a'], known: false, reserveShare: 0.2 };
const refuses = (consumed: number, callerSpent: number, terms = stranger, estimate = 25): boolean =>
  proofReserveRefuses({ consumed, estimate, capMinor: CAP, callerSpent, terms });

describe('the proof reserve', () => {
  it('below the reserve nobody is refused, whatever the caller spent', () => {
    expect(refuses(80_000 - 25, 50_000)).toBe(false);
  });

  it('inside it a stranger takes at most its share: 20 RUB of what its proofs took of the reserve', () => {
    expect(refuses(80_000, 2_000 - 25)).toBe(false);
    expect(refuses(80_000, 2_000 - 24)).toBe(true);
  });

  it('strangers stop at half the reserve; a caller with a record takes the floor, up to the cap', () => {
    expect(refuses(90_000 - 25, 0)).toBe(false);
    expect(refuses(90_000 - 24, 0)).toBe(true);
    expect(refuses(99_975, 50_000, { ...stranger, known: true })).toBe(false);
  });

  it('no reserve: nothing refused', () => {
    expect(refuses(99_975, 50_000, { ...stranger, reserveShare: 0 })).toBe(false);
  });
});
