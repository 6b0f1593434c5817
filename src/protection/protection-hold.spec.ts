import { describe, expect, it } from '@jest/globals';
import { defined, releaseAll, takenInOrder, type ProtectionHold } from './protection-hold.js';

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
    expect(released).toStrictEqual(['third', 'second', 'first']);
  });
});

describe('takenInOrder', () => {
  const released: string[] = [];
  const taken = (name: string): Promise<ProtectionHold> =>
    Promise.resolve({ release: async () => void released.push(name) });
  const refused = (reason: string): Promise<ProtectionHold> => Promise.reject(new Error(reason));

  it('all taken: the holds in the order given, a share not taken as undefined, nothing given back', async () => {
    released.length = 0;
    const holds = await takenInOrder([
      taken('count'),
      undefined,
      Promise.resolve(undefined),
      taken('reserve'),
    ]);
    expect(holds).toHaveLength(4);
    expect(holds[1]).toBeUndefined();
    expect(defined(holds)).toHaveLength(2);
    await defined(holds)[1]!.release();
    expect(released).toStrictEqual(['reserve']);
  });

  it('one refused: every share taken is given back, last first, and the first refusal in order is thrown', async () => {
    released.length = 0;
    const outcome = takenInOrder([
      taken('count'),
      refused('day limit'),
      taken('reserve'),
      refused('spend cap'),
    ]);
    await expect(outcome).rejects.toThrow('day limit');
    expect(released).toStrictEqual(['reserve', 'count']);
  });
});
