import { describe, expect, it } from '@jest/globals';
import { ProtectionRefusal } from '../core/refusal-reason.js';
import { VerificationClientError } from '../core/verification.errors.js';
import type { StartAssessmentContext, StartContext } from '../options/verification.options.js';
import { runStartHooks } from './start-hooks.js';
import type { StartCandidate } from './verification-protection.types.js';

const LOGGER = { warn: () => undefined, error: () => undefined } as never;
const REQUEST = { headers: {} };

function candidate(more: Partial<StartCandidate> = {}): StartCandidate {
  return {
    phoneNumber: '+79161234567',
    method: 'sms',
    owner: 'alice',
    clientKey: '203.0.113.7',
    ip: '203.0.113.7',
    request: REQUEST,
    ...more,
  };
}

describe('runStartHooks: what the host’s hooks are told, and what a start takes from their answers', () => {
  it('both hooks see the start; a suspected one and a switch say so; only assessStart is told the purpose', async () => {
    const seen: { assess?: StartAssessmentContext; before?: StartContext } = {};
    const limits = {
      assessStart: (context: StartAssessmentContext) => {
        seen.assess = context;
        return { decision: 'allow' as const };
      },
      beforeStart: (context: StartContext) => {
        seen.before = context;
        return true;
      },
    };
    const suspected = { reason: 'range_held', range: '+7916', country: 'RU' };
    await runStartHooks(
      limits,
      candidate({ purpose: 'step_up', switchedFrom: 'flash_call' }),
      suspected,
      LOGGER,
    );
    const told = {
      phoneNumber: '+79161234567',
      method: 'sms',
      ip: '203.0.113.7',
      owner: 'alice',
      request: REQUEST,
    };
    expect(seen.before).toStrictEqual({ ...told, suspected, switchedFrom: 'flash_call' });
    expect(seen.assess).toStrictEqual({ ...told, suspected, switchedFrom: 'flash_call', purpose: 'step_up' });
    await runStartHooks(limits, candidate(), undefined, LOGGER);
    expect(seen.before).toStrictEqual(told);
    expect(seen.assess).toStrictEqual(told);
  });

  it.each<[string, Parameters<typeof runStartHooks>[0], boolean]>([
    ['beforeStart', { beforeStart: () => ({ allow: true as const, challengePassed: true }) }, true],
    ['assessStart', { assessStart: () => ({ decision: 'allow' as const, challengePassed: true }) }, true],
    ['neither', { beforeStart: () => true, assessStart: () => ({ decision: 'allow' as const }) }, false],
    ['no hook', {}, false],
  ])('a challenge passed by %s lifts a hold ', async (_name, limits, passed) => {
    expect((await runStartHooks(limits, candidate(), undefined, LOGGER)).challengePassed).toBe(passed);
  });

  it('a graded start offered nothing is refused, never offered a method the account has not', async () => {
    const limits = { assessStart: () => ({ decision: 'grade' as const, reason: 'risky' }) };
    const refusal = await runStartHooks(limits, candidate(), undefined, LOGGER).catch((e: unknown) => e);
    expect(refusal).toBeInstanceOf(VerificationClientError);
    expect(refusal).not.toBeInstanceOf(ProtectionRefusal);
    expect((refusal as VerificationClientError).errorCode).toBe('start_refused');
  });
});
