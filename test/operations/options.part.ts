import { describe, expect, it } from '@jest/globals';
import { Registry } from 'prom-client';
import {
  optionWarnings,
  resolveVerificationOptions,
  VerificationOptionsError,
  type VerificationModuleOptions,
} from '../../src/options/verification.options.js';

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

  it.each([
    [{ phone: { defaultCountry: 'UK' } }, 'phone.defaultCountry', '"UK"; did you mean "GB"?'],
    [{ phone: { allowedCountries: ['RU', 'UK'] } }, 'phone.allowedCountries[1]', 'did you mean "GB"?'],
    [{ phone: { allowedCountries: ['ZZ'] } }, 'phone.allowedCountries[0]', 'not an ISO 3166 alpha-2 country'],
  ])(
    'a country code libphonenumber-js does not know (%j) stops the boot, naming %s',
    (extra, field, problem) => {
      let thrown: unknown;
      try {
        resolve(extra);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(VerificationOptionsError);
      expect((thrown as VerificationOptionsError).field).toBe(field);
      expect((thrown as Error).message).toContain(problem);
    },
  );

  it('"UK" is refused where "GB" boots, and the other real codes boot too', () => {
    expect(() => resolve({ phone: { defaultCountry: 'UK' } })).toThrow(VerificationOptionsError);
    expect(
      resolve({ phone: { defaultCountry: 'GB', allowedCountries: ['GB', 'KZ', 'BY', 'RU'] } }).phone,
    ).toMatchObject({ defaultCountry: 'GB', allowedCountries: ['GB', 'KZ', 'BY', 'RU'] });
  });

  it.each([
    ['https://api.example.com/v1', 1],
    ['https://api.example.com/v1/', 1],
    ['https://api.example.com/V1', 1],
    ['https://api.example.com', 0],
    ['https://api.example.com/proxy/v10', 0],
  ])('api.baseUrl %s boots with %i warning(s) about /v1', (baseUrl, count) => {
    const warnings = optionWarnings(resolve({ api: { ...api, baseUrl } }));
    expect(warnings).toHaveLength(count);
    if (count) expect(warnings[0]).toMatch(/"api\.baseUrl" ends in \/v1/);
  });
});
