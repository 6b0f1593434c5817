/**
 * What a host's change route answers, case by case (phone-change-service-host.ts): the input it checks,
 * the owner it needs, each refusal of the new number and of the old number's confirmation, with its
 * status, error_code, reason and detail; a refusal takes nothing (the next change goes through).
 */
import { describe, expect, it } from '@jest/globals';
import { VerificationClientError } from '../../src/core/verification.errors.js';
import { PhoneVerificationError } from '../../src/core/phone-verification.error.js';
import type { PhoneChangeRequest } from '../../src/guard/phone-change.js';
import type { VerificationModuleOptions } from '../../src/options/verification.options.js';
import {
  CLAIM_TTL_MS,
  COOLDOWN_MS,
  type Facts,
  host,
  NEW,
  OLD,
  T0,
  verifiedFor,
} from './phone-change-service-host.js';

describe('PhoneChange: what the host passes', () => {
  const rebindMessage = 'PhoneChange.change: "rebind" must be a function';
  const currentMessage = 'PhoneChange.change: "currentPhoneNumber" must be E.164 or null';
  it.each<[string, unknown, string]>([
    ['no rebind', { rebind: undefined }, rebindMessage],
    ['a rebind that is no function', { rebind: 'users.rebind' }, rebindMessage],
    ['a current number without its +', { currentPhoneNumber: '79161234567' }, currentMessage],
    ['a current number with a prefix', { currentPhoneNumber: `x${OLD}` }, currentMessage],
    ['a current number with a suffix', { currentPhoneNumber: `${OLD}x` }, currentMessage],
    ['a current number in an array', { currentPhoneNumber: [OLD] }, currentMessage],
    ['no current number (undefined, not null)', { currentPhoneNumber: undefined }, currentMessage],
  ])('%s: the host’s call fails naming it, and nothing is changed', async (_case, input, message) => {
    const h = host();
    const failed = await h.change(input as Partial<PhoneChangeRequest>).catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(PhoneVerificationError);
    expect((failed as Error).message).toBe(message);
    expect(await h.change()).toEqual({
      changedAt: new Date(T0),
      nextChangeAt: new Date(T0 + COOLDOWN_MS),
    });
  });

  it('no request object at all: the call fails naming rebind', async () => {
    const { service } = host();
    await expect(service.change(undefined as unknown as PhoneChangeRequest)).rejects.toThrow(
      new PhoneVerificationError(rebindMessage),
    );
  });

  it.each<[string, unknown]>([
    ['empty', ''],
    ['a number', 42],
    ['missing', undefined],
  ])('a verificationId %s: 400 validation_error naming the field, nothing taken', async (_case, id) => {
    const h = host();
    const message = 'the new number’s verification_id is required';
    expect(await h.refusal({ verificationId: id as string })).toMatchObject({
      status: 400,
      error_code: 'validation_error',
      detail: message,
      errors: [{ field: 'verificationId', message }],
    });
    expect((await h.change()).changedAt).toEqual(new Date(T0));
  });
});

describe('PhoneChange: the owner', () => {
  it.each<[string, Partial<VerificationModuleOptions>, unknown]>([
    ['no owner option', { owner: undefined }, 'alice'],
    ['owner(req) undefined', {}, undefined],
    ['owner(req) null', {}, null],
    ['owner(req) empty', {}, ''],
  ])('%s: 404 not_found, as a verification of nobody’s; nothing taken', async (_case, extra, user) => {
    const h = host(extra);
    expect(await h.refusal({ user })).toMatchObject({ status: 404, error_code: 'not_found' });
    expect(h.rebinds).toEqual([]);
  });
});

describe('PhoneChange: the new number', () => {
  const required = (reason: string, detail: string) => ({
    status: 403,
    error_code: 'phone_verification_required',
    reason,
    detail,
  });
  const purpose = required('purpose', 'The new number must be verified for "change_phone"');
  const stale = required('stale', 'The new number’s verification is too old: verify it again');
  it.each<[string, (now: number) => Facts, Record<string, unknown>]>([
    [
      'pending',
      () => ({ status: 'sent', phoneNumber: null, verifiedAt: null, test: false, purpose: 'change_phone' }),
      {
        status: 409,
        error_code: 'phone_not_verified',
        detail: 'The new phone number is not verified',
        verification_status: 'sent',
      },
    ],
    [
      'a test number',
      (now) => ({ ...verifiedFor('change_phone')(now), test: true }),
      required('test_number', 'A test number cannot become an account’s number'),
    ],
    ['verified for login', verifiedFor('login'), purpose],
    ['verified for no purpose', verifiedFor(undefined), purpose],
    ['verified one tick past the claim lifetime', verifiedFor('change_phone', NEW, CLAIM_TTL_MS + 1), stale],
    [
      'verified at a time unknown',
      (now) => ({ ...verifiedFor('change_phone')(now), verifiedAt: null }),
      stale,
    ],
  ])('%s: refused, and nothing is taken', async (_case, facts, problem) => {
    const h = host();
    h.facts.set('refused', facts);
    expect(await h.refusal({ verificationId: 'refused' })).toMatchObject(problem);
    expect(h.rebinds).toEqual([]);
    expect((await h.change()).changedAt).toEqual(new Date(T0));
  });

  it('verified exactly the claim lifetime ago: changed', async () => {
    const h = host();
    h.facts.set('bound', verifiedFor('change_phone', NEW, CLAIM_TTL_MS));
    expect((await h.change({ verificationId: 'bound' })).changedAt).toEqual(new Date(T0));
  });
});

describe('PhoneChange: the old number’s confirmation (confirmOld)', () => {
  const oldNumber = {
    status: 403,
    error_code: 'phone_verification_required',
    reason: 'old_number',
    detail: 'Confirm the change from the current number first',
  };
  it.each<[string, string | undefined, ((now: number) => Facts) | undefined, Record<string, unknown>]>([
    ['none given', undefined, undefined, oldNumber],
    ['an empty one', '', undefined, oldNumber],
    ['one nobody has', 'unknown', undefined, oldNumber],
    ['of another number', 'proof', verifiedFor('step_up', NEW), oldNumber],
    ['for login', 'proof', verifiedFor('login', OLD), oldNumber],
    ['of a test number', 'proof', (now) => ({ ...verifiedFor('step_up', OLD)(now), test: true }), oldNumber],
    [
      'verified at a time unknown',
      'proof',
      (now) => ({ ...verifiedFor('step_up', OLD)(now), verifiedAt: null }),
      oldNumber,
    ],
    ['one tick too old', 'proof', verifiedFor('step_up', OLD, CLAIM_TTL_MS + 1), oldNumber],
    [
      'whose read is refused by the meter',
      'proof',
      () => new VerificationClientError('rate_limit_exceeded', 'Too many reads', {}, 7),
      { status: 429, error_code: 'rate_limit_exceeded', retry_after: 7 },
    ],
    [
      'whose read fails',
      'proof',
      () => new Error('the store is down'),
      { status: 503, error_code: 'service_unavailable', retry_after: 5 },
    ],
  ])('%s: refused, nothing taken', async (_case, proof, facts, problem) => {
    const h = host({ phoneChange: { cooldownMs: COOLDOWN_MS, confirmOld: true } });
    if (facts) h.facts.set('proof', facts);
    expect(await h.refusal(proof === undefined ? {} : { oldConfirmation: proof })).toMatchObject(problem);
    expect(h.rebinds).toEqual([]);
  });

  it.each<[string, ((now: number) => Facts) | undefined]>([
    [
      'a verification for change_phone, exactly the claim lifetime old',
      verifiedFor('change_phone', OLD, CLAIM_TTL_MS),
    ],
    ['a verification for step_up', verifiedFor('step_up', OLD)],
  ])('%s: changed', async (_case, facts) => {
    const h = host({ phoneChange: { cooldownMs: COOLDOWN_MS, confirmOld: true } });
    if (facts) h.facts.set('proof', facts);
    expect((await h.change({ oldConfirmation: 'proof' })).changedAt).toEqual(new Date(T0));
  });

  it('a step-up claim confirms for its owner only; an account without a number needs none', async () => {
    const h = host({ phoneChange: { cooldownMs: COOLDOWN_MS, confirmOld: true } });
    const claim = await h.claims.issue({
      phoneNumber: OLD,
      owner: 'alice',
      verifiedAt: new Date(T0 - 1_000),
      purpose: 'step_up',
    });
    expect(await h.refusal({ user: 'bob', oldConfirmation: claim })).toMatchObject({ reason: 'old_number' });
    expect((await h.change({ oldConfirmation: claim })).changedAt).toEqual(new Date(T0));
    expect((await h.change({ user: 'nora', currentPhoneNumber: null })).changedAt).toEqual(new Date(T0));
  });
});
