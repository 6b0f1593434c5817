/**
 * Something protection counted or reserved for one start, which is given back when the start
 * does not go ahead (refused further on, or the API answered that nothing was sent).
 */
export interface ProtectionHold {
  release(): Promise<void>;
}

/**
 * Gives every hold back, last taken first. Best effort: a failed release leaves a point counted,
 * which errs on the safe side, and must not hide the refusal the caller is about to report.
 */
export async function releaseAll(holds: (ProtectionHold | undefined)[]): Promise<void> {
  for (const hold of [...holds].reverse()) {
    try {
      await hold?.release();
    } catch {
      // See above: the counter stays a little high until its window ends.
    }
  }
}

/** The values that are there. */
export function defined<T>(values: readonly (T | undefined)[]): T[] {
  const there: T[] = [];
  for (const value of values) if (value !== undefined) there.push(value);
  return there;
}

/**
 * Waits for shares of one start taken together (one round trip). When one is refused, the first
 * refusal in the given order is thrown once every share taken is given back, as when each was taken
 * only after the one before it had passed; otherwise the holds, in order.
 */
export async function takenInOrder(
  takes: readonly (Promise<ProtectionHold | undefined> | undefined)[],
): Promise<(ProtectionHold | undefined)[]> {
  const outcomes = await Promise.allSettled(takes);
  const holds: (ProtectionHold | undefined)[] = [];
  let refused: PromiseRejectedResult | undefined;
  for (const o of outcomes)
    if (o.status === 'fulfilled') holds.push(o.value);
    else {
      holds.push(undefined);
      refused ??= o;
    }
  if (refused === undefined) return holds;
  await releaseAll(holds);
  throw refused.reason;
}
