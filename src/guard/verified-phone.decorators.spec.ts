import { describe, expect, it } from '@jest/globals';
import { ArgumentTypeError } from '../core/phone-verification.error.js';
import { RequireVerifiedPhone } from './verified-phone.decorators.js';

/** A host's mistake in `@RequireVerifiedPhone(…)` fails where the decorator is applied (the class loads), naming the option. */
describe('RequireVerifiedPhone options', () => {
  it.each([
    [{ within: 0 }, /"within" must be a positive integer of ms/],
    [{ within: -1 }, /"within"/],
    [{ within: 1.5 }, /"within"/],
    [{ within: '600000' }, /"within"/],
    [{ within: Number.NaN }, /"within"/],
    [{ allowTestNumbers: 'yes' }, /"allowTestNumbers" must be a boolean/],
    [{ allowTestNumbers: 1 }, /"allowTestNumbers"/],
    [{ purpose: 'Step Up' }, /"purpose" must be a purpose name/],
    [{ purpose: '' }, /"purpose"/],
    [{ purpose: 'a'.repeat(33) }, /"purpose"/],
    [{ purpose: 42 }, /"purpose"/],
  ])('%j is refused with an ArgumentTypeError naming it', (options, message) => {
    const apply = () => RequireVerifiedPhone(options as never);
    expect(apply).toThrow(ArgumentTypeError);
    expect(apply).toThrow(message);
  });

  it.each([
    [{}],
    [{ within: 1 }],
    [{ within: 600_000 }],
    [{ allowTestNumbers: false }],
    [{ allowTestNumbers: true }],
    [{ purpose: 'a' }],
    [{ purpose: 'a'.repeat(32) }],
    [{ purpose: 'step_up-2' }],
  ])('%j is accepted (the bounds included)', (options) => {
    const decorator = RequireVerifiedPhone(options);
    class Routes {
      handler(): void {}
    }
    expect(() => decorator(Routes)).not.toThrow();
  });
});
