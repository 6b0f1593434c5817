import { describe, expect, it } from '@jest/globals';
import { ProtectionRefusal } from '../core/refusal-reason.js';
import { VerificationClientError } from '../core/verification.errors.js';
import type { LimitsOptions, StartContext } from '../options/verification.options.js';
import { runBeforeStart } from './before-start-hook.js';

type Hook = NonNullable<LimitsOptions['beforeStart']>;

const context = { phoneNumber: '+79161234567', method: 'sms' } as unknown as StartContext;

/** Runs the hook; the refusal it threw (or the verdict), and what was logged. */
async function run(hook: Hook | undefined) {
  const errors: { message: string; context: unknown }[] = [];
  const logger = {
    warn: () => undefined,
    error: (message: string, ctx?: unknown) => void errors.push({ message, context: ctx }),
  } as never;
  try {
    return { passed: await runBeforeStart(hook, context, logger), errors };
  } catch (error) {
    if (!(error instanceof VerificationClientError)) throw error;
    return { refusal: error, errors };
  }
}

describe('runBeforeStart', () => {
  it('no hook, or a hook that allows (true, undefined, null, { allow: true }), lets the start through', async () => {
    expect(await run(undefined)).toStrictEqual({ passed: false, errors: [] });
    for (const verdict of [true, undefined, null, { allow: true }, { allow: true, challengePassed: 'yes' }])
      expect(await run(() => verdict as never)).toStrictEqual({ passed: false, errors: [] });
  });

  it('is given the start context, and may answer asynchronously', async () => {
    let seen: unknown;
    const result = await run(async (ctx) => {
      seen = ctx;
      return { allow: true, challengePassed: true };
    });
    expect(seen).toBe(context);
    // The caller solved its challenge: the start may pass a pumping hold.
    expect(result).toStrictEqual({ passed: true, errors: [] });
  });

  it("a refusal is 403 start_refused with the host's code-like reason, else 'refused'", async () => {
    const refused = await run(() => ({ allow: false, reason: 'captcha_required' }));
    expect(refused.refusal).not.toBeInstanceOf(ProtectionRefusal);
    expect([refused.refusal?.errorCode, refused.refusal?.getStatus(), refused.refusal?.extra]).toStrictEqual([
      'start_refused',
      403,
      { reason: 'captcha_required' },
    ]);
    expect(refused.refusal?.message).toBe('The start was refused');
    expect(refused.errors).toStrictEqual([]);
    for (const reason of [undefined, 42, 'has spaces', 'x'.repeat(65), '', 'ok\nnewline'])
      expect((await run(() => ({ allow: false, reason }) as never)).refusal?.extra).toStrictEqual({
        reason: 'refused',
      });
    expect(
      (await run(() => ({ allow: false, reason: `a:B.9_-${'x'.repeat(57)}` }))).refusal?.extra,
    ).toStrictEqual({
      reason: `a:B.9_-${'x'.repeat(57)}`,
    });
    expect((await run(() => false)).refusal?.extra).toStrictEqual({ reason: 'refused' });
  });

  it('a hook that throws fails closed: 503 before_start_failed, logging only the error name', async () => {
    const failed = await run(() => {
      throw new RangeError('secret host data');
    });
    expect(failed.refusal).toBeInstanceOf(ProtectionRefusal);
    expect([
      failed.refusal?.getStatus(),
      failed.refusal?.extra,
      failed.refusal?.retryAfterSeconds,
    ]).toStrictEqual([503, { reason: 'before_start_failed' }, 5]);
    expect(failed.errors).toStrictEqual([
      { message: 'beforeStart hook threw; start refused', context: { error: 'RangeError' } },
    ]);
    const rejected = await run(() => Promise.reject('text'));
    expect(rejected.errors).toStrictEqual([
      { message: 'beforeStart hook threw; start refused', context: { error: 'string' } },
    ]);
  });

  it('a verdict it cannot read fails closed too', async () => {
    for (const verdict of ['yes', 1, {}, { allow: 'no' }]) {
      const odd = await run(() => verdict as never);
      expect(odd.refusal?.extra).toStrictEqual({ reason: 'before_start_failed' });
      expect(odd.refusal?.retryAfterSeconds).toBe(5);
      expect(odd.errors).toStrictEqual([
        {
          message:
            'beforeStart hook returned neither true/undefined nor { allow: false, reason }; start refused',
          context: undefined,
        },
      ]);
    }
  });
});
