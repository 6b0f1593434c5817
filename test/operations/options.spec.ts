import { describe, expect, it } from '@jest/globals';
import { Registry } from 'prom-client';
import {
  resolveVerificationOptions,
  VerificationOptionsError,
  type VerificationModuleOptions,
} from '../../src/verification.options.js';

const api = { baseUrl: 'http://127.0.0.1:1', apiKey: 'k', apiSecret: 's' };
const resolve = (extra: Record<string, unknown>) =>
  resolveVerificationOptions({ api, ...extra } as VerificationModuleOptions);

describe('operations options', () => {
  it('defaults: prices cached 10 minutes, phones masked, no debug lines, no watch, no metrics', () => {
    const options = resolve({});
    expect(options).toMatchObject({ pricesTtlMs: 600_000, maskPhoneNumbers: true });
    expect(options.logLevels).toEqual(['log', 'error', 'warn', 'fatal']);
    expect(options.balanceWatch).toBeUndefined();
    expect(options.metrics).toBeUndefined();
  });

  it.each([
    [{ metrics: { enabled: true, registry: {} } }, 'metrics.registry', 'must be a prom-client Registry'],
    [{ metrics: { enabled: true, prefix: 'my-app.' } }, 'metrics.prefix', 'Prometheus metric name prefix'],
    [{ metrics: { enabled: 'yes' } }, 'metrics.enabled', 'must be true or false'],
    [{ logger: console.log }, 'logger', 'must be a LoggerService'],
    [{ logLevels: ['info'] }, 'logLevels[0]', 'is not a log level'],
    [{ balanceWatch: { intervalMs: 0, threshold: 100 } }, 'balanceWatch.intervalMs', 'positive integer'],
    [{ balanceWatch: { intervalMs: 60_000, threshold: -1 } }, 'balanceWatch.threshold', 'non-negative'],
    [{ pricesTtlMs: 1.5 }, 'pricesTtlMs', 'positive integer'],
    [{ maskPhoneNumbers: 'no' }, 'maskPhoneNumbers', 'must be true or false'],
  ])('%j is refused at boot, naming %s', (extra, field, problem) => {
    let thrown: unknown;
    try {
      resolve(extra);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(VerificationOptionsError);
    expect((thrown as VerificationOptionsError).field).toBe(field);
    expect((thrown as Error).message).toContain(problem);
  });

  it('accepts a real registry, a prefix, a Nest-style logger and logLevels: false', () => {
    const registry = new Registry();
    const logger = { log: () => undefined, error: () => undefined, warn: () => undefined };
    const options = resolve({
      metrics: { enabled: true, registry, prefix: 'shop_' },
      logger,
      logLevels: false,
    });
    expect(options.metrics).toEqual({ enabled: true, registry, prefix: 'shop_' });
    expect(options.logger).toBe(logger);
    expect(options.logLevels).toBe(false);
  });
});
