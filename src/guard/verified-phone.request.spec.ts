import { describe, expect, it } from '@jest/globals';
import { attachVerifiedPhone, verifiedPhoneOf, type VerifiedPhoneDetails } from './verified-phone.request.js';

const details: VerifiedPhoneDetails = {
  phoneNumber: '+79161234567',
  verifiedAt: new Date(0),
  owner: 'u1',
  test: false,
  source: 'claim',
  claim: 'vpc1.a.b',
};

/** `verifiedPhoneOf` is public: a host's own parameter decorator (GraphQL) hands it whatever its context holds. */
describe('verifiedPhoneOf', () => {
  it.each([[undefined], [null], ['a request'], [42]])('%p: undefined, no throw', (request) => {
    expect(verifiedPhoneOf(request)).toBeUndefined();
  });

  it('a request the guard did not pass: undefined; one it passed: what it found, on that request only', () => {
    const passed = { headers: {} };
    const other = { headers: {} };
    attachVerifiedPhone(passed, details);
    expect(verifiedPhoneOf(passed)).toBe(details);
    expect(verifiedPhoneOf(other)).toBeUndefined();
    // Never a field a host could set or read by name.
    expect(Object.keys(passed)).toStrictEqual(['headers']);
  });
});
