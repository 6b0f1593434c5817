import { describe, expect, it } from '@jest/globals';
import { releaseAll, type ProtectionHold } from './protection-hold.js';

describe('releaseAll', () => {
  it('gives every hold back, last taken first, past a failing one and a missing one', async () => {
    const released: string[] = [];
    const hold = (name: string, fails = false): ProtectionHold => ({
      release: async () => {
        released.push(name);
        if (fails) throw new Error('store down');
      },
    });
    await expect(releaseAll([hold('first'), undefined, hold('second', true), hold('third')])).resolves.toBe(
      undefined,
    );
    expect(released).toEqual(['third', 'second', 'first']);
  });
});
