import { describe, expect, it, jest } from '@jest/globals';
import type { ModuleRef } from '@nestjs/core';
import type { ResolvedVerificationOptions } from '../options/verification.options.js';
import type { BalanceReading, VerificationBalanceWatch } from './balance-watch.service.js';

/*
 * A host without @nestjs/terminus (an optional peer) still gets the indicator's answer, in terminus' shape:
 * `{ [key]: { status, ...details } }`, each status as a host with terminus would read it. Mocks the package
 * away, so it runs alone (imported by no merged file).
 */

jest.unstable_mockModule('@nestjs/terminus', () => {
  throw new Error("Cannot find module '@nestjs/terminus'");
});
const { VerificationHealthIndicator } = await import('./verification-health.indicator.js');

function indicator(checkNow: () => Promise<BalanceReading>, threshold?: number) {
  const watch = { checkNow } as unknown as VerificationBalanceWatch;
  const moduleRef = { get: () => undefined } as unknown as ModuleRef;
  const options = { balanceWatch: threshold === undefined ? undefined : { threshold } };
  return new VerificationHealthIndicator(options as ResolvedVerificationOptions, watch, moduleRef);
}
const reading = (amount: number) => () => Promise.resolve({ amount, currency: 'RUB' } as BalanceReading);

describe('VerificationHealthIndicator without @nestjs/terminus', () => {
  it('answers up, down and degraded in terminus’ shape, with their details', async () => {
    expect(await indicator(reading(50)).isHealthy('phone')).toStrictEqual({
      phone: { status: 'up', balance: 50, currency: 'RUB', threshold: 0 },
    });
    expect(await indicator(reading(0)).isHealthy('phone')).toStrictEqual({
      phone: {
        status: 'down',
        reason: 'balance_exhausted',
        message: 'The prepaid balance is exhausted: every start is refused (402)',
        balance: 0,
        currency: 'RUB',
        threshold: 0,
      },
    });
    const low = {
      reason: 'balance_below_threshold',
      message: 'The prepaid balance is below 100 RUB',
      balance: 20,
      currency: 'RUB',
      threshold: 100,
    };
    expect(await indicator(reading(20), 100).isHealthy('phone')).toStrictEqual({
      phone: { status: 'down', ...low },
    });
    expect(await indicator(reading(20), 100).isHealthy('phone', { lowBalance: 'degraded' })).toStrictEqual({
      phone: { status: 'degraded', ...low },
    });
  });

  it('a read that fails is down with its reason', async () => {
    const health = indicator(() => Promise.reject(new TypeError('reading.amount is undefined')));
    expect(await health.isHealthy()).toStrictEqual({
      verification: { status: 'down', reason: 'api_error', message: 'The balance could not be read' },
    });
  });
});
