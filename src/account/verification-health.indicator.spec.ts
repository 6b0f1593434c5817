import { afterEach, describe, expect, it, jest } from '@jest/globals';
import type { ModuleRef } from '@nestjs/core';
import { VerificationApiUnavailableError } from '../api/verification-api.error.js';
import type { ResolvedVerificationOptions } from '../options/verification.options.js';
import type { BalanceReading, VerificationBalanceWatch } from './balance-watch.service.js';
import { VerificationHealthIndicator } from './verification-health.indicator.js';

/*
 * The read's deadline on jest's clock (the routes, terminus and the API's failures are
 * test/operations/health.e2e's): down as `api_timeout` when the deadline passes, not a tick before; and a
 * read that answers in time leaves no timer behind, which would hold a host's process open for the rest
 * of the deadline after its last check. And two reads' failures the routes do not reach: one that is no API
 * error, and the API client's own time-out.
 */

afterEach(() => {
  jest.useRealTimers();
});

function indicator(checkNow: () => Promise<BalanceReading>) {
  const watch = { checkNow } as unknown as VerificationBalanceWatch;
  const moduleRef = {
    get: () => {
      throw new Error('no TerminusModule in this host');
    },
  } as unknown as ModuleRef;
  return new VerificationHealthIndicator({} as ResolvedVerificationOptions, watch, moduleRef);
}

describe('VerificationHealthIndicator read deadline', () => {
  it('answers up from a fast read and leaves no timer running', async () => {
    jest.useFakeTimers();
    const health = indicator(() => Promise.resolve({ amount: 50, currency: 'RUB' } as BalanceReading));
    await expect(health.isHealthy('phone', { timeoutMs: 60_000 })).resolves.toEqual({
      phone: { status: 'up', balance: 50, currency: 'RUB', threshold: 0 },
    });
    expect(jest.getTimerCount()).toBe(0);
  });

  it('leaves no timer running after a failed read either', async () => {
    jest.useFakeTimers();
    const health = indicator(() => Promise.reject(new Error('socket hang up')));
    const result = await health.isHealthy('phone', { timeoutMs: 60_000 });
    expect(result.phone).toMatchObject({ status: 'down', reason: 'api_error' });
    expect(jest.getTimerCount()).toBe(0);
  });

  it('is still waiting one millisecond before the deadline and down as api_timeout at it', async () => {
    jest.useFakeTimers();
    const health = indicator(() => new Promise<BalanceReading>(() => undefined));
    let settled: unknown;
    const check = health.isHealthy('phone', { timeoutMs: 250 }).then((result) => (settled = result));
    await jest.advanceTimersByTimeAsync(249);
    expect(settled).toBeUndefined();
    await jest.advanceTimersByTimeAsync(1);
    await check;
    expect(settled).toEqual({
      phone: {
        status: 'down',
        reason: 'api_timeout',
        message: 'The verification API did not answer in time',
      },
    });
  });

  it('waits 3000 ms by default', async () => {
    jest.useFakeTimers();
    const health = indicator(() => new Promise<BalanceReading>(() => undefined));
    let settled: unknown;
    const check = health.isHealthy().then((result) => (settled = result));
    await jest.advanceTimersByTimeAsync(2_999);
    expect(settled).toBeUndefined();
    await jest.advanceTimersByTimeAsync(1);
    await check;
    expect(settled).toMatchObject({ verification: { status: 'down', reason: 'api_timeout' } });
  });

  it('a read failing with no API error is down as api_error, saying the balance could not be read', async () => {
    const health = indicator(() => Promise.reject(new TypeError('reading.amount is undefined')));
    expect(await health.isHealthy('phone')).toStrictEqual({
      phone: { status: 'down', reason: 'api_error', message: 'The balance could not be read' },
    });
  });

  it("the API client's own time-out is down as api_timeout, naming the client's reason", async () => {
    const timedOut = new VerificationApiUnavailableError({ operation: 'getBalance', reason: 'timeout' });
    expect(await indicator(() => Promise.reject(timedOut)).isHealthy('phone')).toStrictEqual({
      phone: {
        status: 'down',
        reason: 'api_timeout',
        message: 'The verification API gave no usable answer (timeout)',
      },
    });
  });
});
