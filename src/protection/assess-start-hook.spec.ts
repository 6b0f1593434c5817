import { describe, expect, it } from '@jest/globals';
import { ProtectionRefusal } from '../core/refusal-reason.js';
import { VerificationClientError } from '../core/verification.errors.js';
import type { KnownVerificationMethod } from '../core/verification-method.js';
import type { LimitsOptions, StartAssessmentContext } from '../options/verification.options.js';
import { AssessmentRefusal, runAssessStart } from './assess-start-hook.js';

type Hook = NonNullable<LimitsOptions['assessStart']>;
const OFFERED: KnownVerificationMethod[] = ['sms', 'reverse_flash_call', 'flash_call', 'msgr2_bot'];

/** Runs the hook for a start of `method`; what it answered or threw, and what was logged. */
async function run(hook: Hook | undefined, method: KnownVerificationMethod = 'sms', offered = OFFERED) {
  const errors: { message: string; context: unknown }[] = [];
  const logger = {
    warn: () => undefined,
    error: (message: string, ctx?: unknown) => void errors.push({ message, context: ctx }),
  } as never;
  const context = { phoneNumber: '+79161234567', method } as unknown as StartAssessmentContext;
  try {
    return { outcome: await runAssessStart(hook, context, offered, logger), errors };
  } catch (error) {
    if (!(error instanceof VerificationClientError)) throw error;
    return { refusal: error, errors };
  }
}

describe('runAssessStart', () => {
  it('no hook: nothing to record', async () => {
    expect(await run(undefined)).toStrictEqual({ outcome: undefined, errors: [] });
  });

  it('allow: recorded with its reason, and a passed challenge only when it says true', async () => {
    expect((await run(() => ({ decision: 'allow' }))).outcome).toStrictEqual({
      facts: { decision: 'allow' },
      challengePassed: false,
    });
    expect(
      (await run(() => ({ decision: 'allow', reason: 'clean', challengePassed: true }))).outcome,
    ).toStrictEqual({
      facts: { decision: 'allow', reason: 'clean', challengePassed: true },
      challengePassed: true,
    });
    const truthy = { decision: 'allow', challengePassed: 'yes' } as never;
    expect((await run(() => truthy)).outcome?.challengePassed).toBe(false);
  });

  it('a reason is kept only as a short code: 64 characters pass, 65 do not; 6 digits in a row pass, 7 do not', async () => {
    const reasonOf = async (reason: string) =>
      ((await run(() => ({ decision: 'refuse', reason }))).refusal as AssessmentRefusal).assessment.reason;
    expect(await reasonOf('a'.repeat(64))).toBe('a'.repeat(64));
    expect(await reasonOf('a'.repeat(65))).toBe('unspecified');
    expect(await reasonOf('op_916123')).toBe('op_916123');
    expect(await reasonOf('op_9161234')).toBe('unspecified');
    expect(await reasonOf('+79161234567')).toBe('unspecified');
    expect(await reasonOf('has space')).toBe('unspecified');
  });

  it('grade: a method charged on proof goes on; another is 409 method_held naming those offered; none offered is 403', async () => {
    const grade: Hook = () => ({ decision: 'grade', reason: 'risky' });
    expect((await run(grade, 'reverse_flash_call')).outcome).toStrictEqual({
      facts: { decision: 'grade', reason: 'risky' },
      challengePassed: false,
    });
    const held = (await run(grade, 'sms')).refusal;
    expect(held).toBeInstanceOf(ProtectionRefusal);
    expect(held?.errorCode).toBe('method_held');
    expect(held?.extra).toMatchObject({
      offered_methods: ['reverse_flash_call', 'msgr2_bot'],
      held: 'assessment',
      assessment_reason: 'risky',
    });
    const none = (await run(grade, 'sms', ['sms', 'flash_call'])).refusal;
    expect(none).toBeInstanceOf(AssessmentRefusal);
    expect(none?.errorCode).toBe('start_refused');
    expect((none as AssessmentRefusal).assessment).toStrictEqual({ decision: 'refuse', reason: 'risky' });
  });

  it('step_up: 403 step_up_required with the reason and a well-formed challenge only', async () => {
    const asked = (await run(() => ({ decision: 'step_up', reason: 'sim_changed', challenge: 'captcha' })))
      .refusal;
    expect(asked?.errorCode).toBe('step_up_required');
    expect(asked?.detail).toBe('This start needs a step-up first: pass the challenge and start again');
    expect(asked?.extra).toStrictEqual({ reason: 'sim_changed', challenge: 'captcha' });
    const refused = (await run(() => ({ decision: 'refuse' }) as never)).refusal;
    expect([refused?.errorCode, refused?.detail, refused?.extra]).toStrictEqual([
      'start_refused',
      'The start was refused',
      { reason: 'unspecified' },
    ]);
    const bare = (await run(() => ({ decision: 'step_up', reason: 42, challenge: 12345 }) as never)).refusal;
    expect(bare?.extra).toStrictEqual({ reason: 'unspecified' });
    const graded = await run(() => ({ decision: 'grade' }) as never, 'sms', ['sms']);
    expect((graded.refusal as AssessmentRefusal).assessment).toStrictEqual({
      decision: 'refuse',
      reason: 'unspecified',
    });
    const odd = (await run(() => ({ decision: 'step_up', reason: 'x', challenge: 'see +79161234567' })))
      .refusal;
    expect(odd?.extra).toStrictEqual({ reason: 'x' });
  });

  it('a throw, or an answer without a known decision, fails closed with 503 assess_start_failed; only the name is logged', async () => {
    const thrown = await run(() => {
      throw new RangeError('lookup of +79161234567 failed');
    });
    expect(thrown.refusal).toBeInstanceOf(ProtectionRefusal);
    expect((thrown.refusal as ProtectionRefusal).reason).toBe('assess_start_failed');
    expect(thrown.errors).toStrictEqual([
      { message: 'assessStart hook threw; start refused', context: { error: 'RangeError' } },
    ]);
    expect((await run(() => ({ decision: 'ALLOW' }) as never)).errors).toStrictEqual([
      {
        message: 'assessStart hook answered no decision of allow, grade, step_up or refuse; start refused',
        context: undefined,
      },
    ]);
    for (const answer of [undefined, null, true, 'allow', { decision: 'ALLOW' }, {}])
      expect(((await run(() => answer as never)).refusal as ProtectionRefusal).reason).toBe(
        'assess_start_failed',
      );
  });
});
