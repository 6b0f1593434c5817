import { describe, expect, it } from '@jest/globals';
import {
  resolveVerificationOptions,
  VerificationOptionsError,
  type VerificationModuleOptions,
} from '../../src/options/verification.options.js';

const api = { baseUrl: 'http://127.0.0.1:1', apiKey: 'k', apiSecret: 's' };
const resolve = (limits: Record<string, unknown>) =>
  resolveVerificationOptions({ api, limits } as VerificationModuleOptions).limits;
const HOUR = 3_600_000;

describe('limit options of the per-caller budgets and wrong codes', () => {
  it('defaults: 5/h per number and caller under a 15/h ceiling per number, 10 wrong codes an hour per number and per owner', () => {
    expect(resolve({})).toMatchObject({
      startPerPhoneAndCaller: { points: 5, windowMs: HOUR },
      startPerPhone: { points: 15, windowMs: HOUR },
      wrongCodesPerPhone: { points: 10, windowMs: HOUR },
      wrongCodesPerOwner: { points: 10, windowMs: HOUR },
    });
  });

  it('each can be set or switched off on its own, and all are off with limits.enabled: false', () => {
    expect(
      resolve({
        startPerPhone: { points: 30, windowMs: HOUR },
        startPerPhoneAndCaller: false,
        wrongCodesPerOwner: false,
      }),
    ).toMatchObject({
      startPerPhone: { points: 30, windowMs: HOUR },
      startPerPhoneAndCaller: false,
      wrongCodesPerPhone: { points: 10, windowMs: HOUR },
      wrongCodesPerOwner: false,
    });
    expect(resolve({ enabled: false })).toMatchObject({
      startPerPhoneAndCaller: false,
      wrongCodesPerPhone: false,
      wrongCodesPerOwner: false,
    });
  });

  it.each([
    [{ startPerPhoneAndCaller: { points: 0, windowMs: HOUR } }, 'limits.startPerPhoneAndCaller.points'],
    [{ wrongCodesPerPhone: { points: 10, windowMs: 1.5 } }, 'limits.wrongCodesPerPhone.windowMs'],
    [{ wrongCodesPerOwner: 10 }, 'limits.wrongCodesPerOwner'],
  ])('%j is refused at boot, naming %s', (limits, field) => {
    let thrown: unknown;
    try {
      resolve(limits);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(VerificationOptionsError);
    expect((thrown as VerificationOptionsError).field).toBe(field);
  });
});
