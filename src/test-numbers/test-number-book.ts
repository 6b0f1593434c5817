import { createHash, timingSafeEqual } from 'node:crypto';
import type { TestNumberOutcome } from '../core/test-session.js';
import type { ResolvedTestNumbers } from '../options/verification.options.js';

/** One configured reviewer or demo number. */
export interface TestNumberEntry {
  phoneNumber: string;
  code?: string;
  outcome?: TestNumberOutcome;
}

/**
 * The host's test numbers and who may use them: matched exactly on the E.164 number (never a
 * prefix), the fixed code compared in constant time.
 */
export class TestNumberBook {
  readonly #numbers: ReadonlyMap<string, TestNumberEntry>;
  readonly #owners: ReadonlySet<string> | undefined;

  constructor(options: ResolvedTestNumbers) {
    this.#numbers = new Map(options.numbers.map((entry) => [entry.phoneNumber, entry]));
    this.#owners = options.owners === undefined ? undefined : new Set(options.owners);
  }

  get size(): number {
    return this.#numbers.size;
  }

  /** The entry of an E.164 number, or undefined for every other number. */
  find(phoneNumber: string): TestNumberEntry | undefined {
    return this.#numbers.get(phoneNumber);
  }

  /**
   * The entry a start of this number by `owner` plays, after the owner allowlist: for any other
   * owner (or none) it is a real number (undefined), sent to the API as any other, so a stranger
   * cannot tell a reviewer's number from the answer. Undefined for a real number.
   */
  admit(phoneNumber: string, owner: string | undefined): TestNumberEntry | undefined {
    const entry = this.find(phoneNumber);
    if (entry === undefined) return undefined;
    if (this.#owners !== undefined && (owner === undefined || !this.#owners.has(owner))) return undefined;
    return entry;
  }

  /** Whether `code` is the number's fixed code, in time that does not depend on where they differ. */
  codeMatches(entry: TestNumberEntry, code: string): boolean {
    if (entry.code === undefined) return false;
    // Digests of equal length: timingSafeEqual needs equal lengths, and the length is not revealed either.
    return timingSafeEqual(sha256(entry.code), sha256(code));
  }
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}
