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
