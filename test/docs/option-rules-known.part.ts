/**
 * Every field of the option types is known to the option rules, so no real option is ever refused as
 * unknown (test/operations/unknown-options: an unknown one fails the boot). Here because it reads the
 * fields through the docs checks' one TypeScript program (source-program.ts).
 */
import { describe, expect, it } from '@jest/globals';
import { VERIFICATION_OPTION_RULES } from '../../src/options/verification-options.rules.js';
import { UNRULED_FIELDS } from '../../src/options/unknown-options.js';
import { optionFields } from './source-program.js';

describe('unknown option keys', () => {
  it('every field of the option types is known (a field added to a type without a rule fails here)', () => {
    const known = new Set([...VERIFICATION_OPTION_RULES.map((rule) => rule.path), ...UNRULED_FIELDS]);
    const fields = optionFields().map((field) => field.path);
    expect(fields.length).toBeGreaterThan(100);
    expect(fields.filter((path) => !known.has(path) && !path.startsWith('store.'))).toEqual([]);
  });
});
