import { describe, expect, it } from '@jest/globals';
import { RESOLVED_VERIFICATION_OPTIONS } from '../options/verification-options.tokens.js';
import { VerificationService } from '../verification/verification.service.js';
import { getVerificationToken } from './verification-registration.js';

/**
 * `getVerificationToken` is public: a host injects a named registration's exports by it. Each export's
 * token (a class, a symbol or a string) names the registration and the export, and no two exports of one
 * registration, nor one export of two registrations, share a token.
 */
describe('getVerificationToken', () => {
  it('the unnamed registration exports each token as it is', () => {
    expect(getVerificationToken(VerificationService)).toBe(VerificationService);
    expect(getVerificationToken(RESOLVED_VERIFICATION_OPTIONS)).toBe(RESOLVED_VERIFICATION_OPTIONS);
    expect(getVerificationToken('host-token')).toBe('host-token');
  });

  it("a named registration's token names it and the export, whether a class, a symbol or a string", () => {
    expect(getVerificationToken(VerificationService, 'north')).toBe(
      'nestjs-phone-verification:north:VerificationService',
    );
    expect(getVerificationToken(RESOLVED_VERIFICATION_OPTIONS, 'north')).toBe(
      'nestjs-phone-verification:north:RESOLVED_VERIFICATION_OPTIONS',
    );
    expect(getVerificationToken('host-token', 'north')).toBe('nestjs-phone-verification:north:host-token');
    expect(getVerificationToken(Symbol(), 'north')).toBe('nestjs-phone-verification:north:');
  });

  it('one export of two registrations, and two exports of one, never share a token', () => {
    const tokens = ['north', 'south'].flatMap((name) =>
      [VerificationService, RESOLVED_VERIFICATION_OPTIONS, 'host-token'].map((token) =>
        getVerificationToken(token, name),
      ),
    );
    expect(new Set(tokens).size).toBe(6);
  });
});
