import { expect, it } from '@jest/globals';
import { VerificationOptionsError, type OptionRule } from '../../src/core/option-rules.js';
import { resolveVerificationOptions } from '../../src/options/verification-options.resolver.js';
import type {
  ResolvedVerificationOptions,
  RouteSettings,
  VerificationModuleOptions,
} from '../../src/options/verification.options.js';

/** What the option rule specs give the module: an API that is never called, and a valid webhook secret. */
export const api = { baseUrl: 'http://127.0.0.1:1', apiKey: 'k', apiSecret: 's' };
export const SECRET = 'whsec_c2VjcmV0';

/** One wrong value per rule: [case name, options, field named, words of the message]. */
export type RefusalCase = [string, unknown, string, string];

/** Calls `run` and returns what it threw (failing when nothing was thrown). */
export function thrown(run: () => unknown): VerificationOptionsError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(VerificationOptionsError);
    return error as VerificationOptionsError;
  }
  throw new Error('expected a VerificationOptionsError');
}

/** The module's refusal of `options` (at boot, or against the routes declared at import). */
export const refusal = (options: unknown, declared?: RouteSettings): VerificationOptionsError =>
  thrown(() => resolveVerificationOptions(options as VerificationModuleOptions, declared));

/**
 * Each case is refused naming its field; and every rule of `rules` has a case, so that a rule added
 * without one fails here.
 */
export function itRefusesEachCase(cases: RefusalCase[], rules: readonly OptionRule[]): void {
  it.each(cases)('%s', (_name, options, field, words) => {
    const error = refusal(options);
    expect(error.field).toBe(field);
    expect(error.message.startsWith(`VerificationModule: option "${field}" `)).toBe(true);
    expect(error.message).toContain(words);
  });

  it('every rule of the table has a case above', () => {
    const covered = new Set(
      cases.map(([, , field]) => (field === '(root)' ? '' : field.replace(/\[\d+\]/g, '[]'))),
    );
    const uncovered = rules.map((rule) => rule.path).filter((path) => !covered.has(path));
    expect(uncovered).toEqual([]);
  });
}

/** Options that boot at a rule's bound: [case, options, what to read of the resolved options, its value]. */
export type BootCase = [
  string,
  VerificationModuleOptions,
  (resolved: ResolvedVerificationOptions) => unknown,
  unknown,
];

/** Each refused case is refused naming its field and saying its words; each boot case boots and resolves as given. */
export function itRefusesAndBoots(refused: RefusalCase[], boots: BootCase[]): void {
  it.each(refused)('%s: refused', (_name, options, field, words) => {
    const error = refusal(options);
    expect(error.field).toBe(field);
    expect(error.message).toContain(words);
  });

  it.each(boots)('%s: boots', (_name, options, read, expected) => {
    expect(read(resolveVerificationOptions(options))).toEqual(expected);
  });
}
