/** The mark of the family, on the prototype of each of its lines (never on an instance: nothing to copy). */
const FAMILY = Symbol('PhoneVerificationError');

/**
 * The root of every error this package throws on the server side: `err instanceof PhoneVerificationError`
 * tells a host's code that the error is the package's, whatever its kind. Its lines:
 * - errors a host handles or logs extend it: the API client's, the store's, a listener's, a bad option at
 *   boot, the sandbox's, and the internal ones that never leave the package;
 * - lines whose base must be another class join it with `joinErrorFamily`: the errors a host renders
 *   (`VerificationError`, an `HttpException`, so Nest's and a host's filters render it as they render
 *   their own, while a host's `@Catch(HttpException)` never sees an API 401 or a store outage), and a bad
 *   argument's `RangeError` and `TypeError`, still what the docs name.
 */
export class PhoneVerificationError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }

  /** True for every line of the family; a subclass answers for its own chain only. */
  static override [Symbol.hasInstance](value: unknown): boolean {
    if (this === PhoneVerificationError)
      return typeof value === 'object' && value !== null && FAMILY in value;
    return Function.prototype[Symbol.hasInstance].call(this, value);
  }
}

/** Makes the instances of `line` (a class of the package with a base of its own) answer to the root. */
export function joinErrorFamily(line: abstract new (...args: never[]) => Error): void {
  Object.defineProperty(line.prototype, FAMILY, { value: true });
}

joinErrorFamily(PhoneVerificationError);

/** A bad argument to a call of the package: a `RangeError` (the docs' name for it) of the family. */
export class ArgumentRangeError extends RangeError {}
joinErrorFamily(ArgumentRangeError);

/** An argument of the wrong kind: a `TypeError` of the family. */
export class ArgumentTypeError extends TypeError {}
joinErrorFamily(ArgumentTypeError);
