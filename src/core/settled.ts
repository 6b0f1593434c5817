/** A promise's outcome to act on later: a function that returns, or throws its error (never unhandled). */
export function settled(promise: Promise<unknown>): Promise<() => void> {
  return promise.then(
    () => () => undefined,
    (error: unknown) => () => {
      throw error;
    },
  );
}
