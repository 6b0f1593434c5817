import { afterAll, describe, expect, it } from '@jest/globals';
import { MemoryStore } from '../store/memory.store.js';
import {
  api,
  itRefusesAndBoots,
  refusal,
  type BootCase,
  type RefusalCase,
} from '../../test/support/option-refusals.js';
import { resolveVerificationOptions } from './verification-options.resolver.js';

/*
 * The option rules' other shapes: the rule specs give one wrong value per rule; these are the values a
 * careless rule would let through (a pattern matched anywhere in the text, a type not checked, a unit
 * left out of the message) and the values at a rule's bound that must boot.
 */

const pumping = (extra: Record<string, unknown>) => ({ api, limits: { pumping: extra } });
const orchestration = (extra: Record<string, unknown>) => ({ api, orchestration: extra });
const fallback = (extra: Record<string, unknown>) => orchestration({ fallback: extra });
const safeList = (list: Record<string, unknown>) => pumping({ safeList: list });
const KEY = 'k'.repeat(32);

/** Refused, naming the field: [case, options, field named, words of the message]. */
const REFUSED: RefusalCase[] = [
  // The other common non-ISO spellings of a country, each with the code meant (UK's is the rule spec's case).
  [
    'a default country spelt EL',
    { api, phone: { defaultCountry: 'EL' } },
    'phone.defaultCountry',
    'did you mean "GR"?',
  ],
  [
    'a country spelt EN',
    { api, phone: { allowedCountries: ['RU', 'EN'] } },
    'phone.allowedCountries[1]',
    'did you mean "GB"?',
  ],
  [
    'a prior keyed by a lowercase code',
    pumping({ expectedConversion: { ru: 0.8 } }),
    'limits.pumping.expectedConversion',
    'ISO country codes',
  ],
  [
    'a prior keyed by a code with a prefix',
    pumping({ expectedConversion: { XRU: 0.8 } }),
    'limits.pumping.expectedConversion',
    'has "XRU"',
  ],
  [
    'a prior keyed by a code with a suffix',
    pumping({ expectedConversion: { RUS: 0.8 } }),
    'limits.pumping.expectedConversion',
    'has "RUS"',
  ],
  [
    'a prior given as text',
    pumping({ expectedConversion: { RU: '0.8' } }),
    'limits.pumping.expectedConversion',
    '.RU must be a share above 0 and below 1',
  ],
  [
    'a surge factor below 1',
    pumping({ surgeFactor: 0.5 }),
    'limits.pumping.surgeFactor',
    'must be a number of at least 1 (got 0.5)',
  ],
  ['a surge factor given as text', pumping({ surgeFactor: '3' }), 'limits.pumping.surgeFactor', 'at least 1'],
  ['an endless surge factor', pumping({ surgeFactor: Infinity }), 'limits.pumping.surgeFactor', 'at least 1'],
  [
    'a rate limit without its points',
    { api, limits: { startPerIp: { windowMs: 60_000 } } },
    'limits.startPerIp.points',
    'must be a positive integer (got undefined)',
  ],
  [
    'an IPv6 prefix length, in bits',
    { api, limits: { ipv6PrefixLength: 16 } },
    'limits.ipv6PrefixLength',
    'whole number of bits from 32 to 128',
  ],
  [
    'a UTC offset, in minutes',
    { api, limits: { spendCap: { amount: 1, windowMs: 1000, utcOffsetMinutes: 900 } } },
    'limits.spendCap.utcOffsetMinutes',
    'whole number of minutes',
  ],
  [
    'range digits, in digits',
    pumping({ rangeDigits: 9 }),
    'limits.pumping.rangeDigits',
    'whole number of digits',
  ],
  [
    'a safe number with text before it',
    safeList({ numbers: ['x+79161234567'] }),
    'limits.pumping.safeList.numbers[0]',
    'an E.164 number',
  ],
  [
    'a safe number too long',
    safeList({ numbers: ['+7916123456789012'] }),
    'limits.pumping.safeList.numbers[0]',
    'an E.164 number',
  ],
  [
    'a safe number with a leading 0',
    safeList({ numbers: ['+09161234567'] }),
    'limits.pumping.safeList.numbers[0]',
    'an E.164 number',
  ],
  [
    'a safe range with text before it',
    safeList({ ranges: ['x+7916123'] }),
    'limits.pumping.safeList.ranges[0]',
    'a range like',
  ],
  [
    'a safe range too long',
    safeList({ ranges: ['+791612345678901'] }),
    'limits.pumping.safeList.ranges[0]',
    'a range like',
  ],
  [
    'a safe range with a leading 0',
    safeList({ ranges: ['+0916123'] }),
    'limits.pumping.safeList.ranges[0]',
    'a range like',
  ],
  [
    'a safe owner id past 200 characters',
    safeList({ owners: ['o'.repeat(201)] }),
    'limits.pumping.safeList.owners[0]',
    'a non-empty owner id',
  ],
  [
    'a fallback that is not an object',
    orchestration({ fallback: 'soon' }),
    'orchestration.fallback',
    'must be { stalledShare?, waitingShare?, minSamples?, floorMs?, ceilingMs? } or false',
  ],
  [
    'a fallback with an unknown field',
    fallback({ timeoutMs: 1 }),
    'orchestration.fallback',
    '(fields: stalledShare',
  ],
  ['a floor, in ms', fallback({ floorMs: 10 }), 'orchestration.fallback.floorMs', 'whole number of ms'],
  ['a ceiling, in ms', fallback({ ceilingMs: 10 }), 'orchestration.fallback.ceilingMs', 'whole number of ms'],
  [
    'a ceiling a millisecond under its floor',
    fallback({ floorMs: 20_000, ceilingMs: 19_999 }),
    'orchestration.fallback.ceilingMs',
    'must be at least floorMs',
  ],
  [
    'a handle key of 31 characters',
    { api, handleKey: 'k'.repeat(31) },
    'handleKey',
    'at least 32 characters',
  ],
  ['a data key of 31 characters', { api, dataKey: 'k'.repeat(31) }, 'dataKey', 'at least 32 characters'],
  [
    'a balance threshold given as text',
    { api, balanceWatch: { intervalMs: 1000, threshold: '5' } },
    'balanceWatch.threshold',
    'non-negative number',
  ],
  [
    'a negative balance threshold',
    { api, balanceWatch: { intervalMs: 1000, threshold: -1 } },
    'balanceWatch.threshold',
    'non-negative number',
  ],
  [
    'an endless balance threshold',
    { api, balanceWatch: { intervalMs: 1000, threshold: Infinity } },
    'balanceWatch.threshold',
    'non-negative number',
  ],
  [
    'a logger without warn',
    { api, logger: { log: () => undefined, error: () => undefined } },
    'logger',
    'LoggerService',
  ],
  [
    'a metrics registry without registerMetric',
    { api, metrics: { enabled: true, registry: { getSingleMetric: () => undefined } } },
    'metrics.registry',
    'prom-client Registry',
  ],
  [
    'a metrics registry without getSingleMetric',
    { api, metrics: { enabled: true, registry: { registerMetric: () => undefined } } },
    'metrics.registry',
    'prom-client Registry',
  ],
  ['an empty log level', { api, logLevels: [''] }, 'logLevels[0]', 'is not a log level'],
  ['no options at all', undefined, '(root)', 'must be an options object'],
  ['no methods', { api, methods: [] }, 'methods', 'a non-empty array like ["sms"]'],
  [
    'a default country in lowercase',
    { api, phone: { defaultCountry: 'ru' } },
    'phone.defaultCountry',
    'an ISO 3166 alpha-2 code like "RU" (got',
  ],
  [
    'no allowed countries',
    { api, phone: { allowedCountries: [] } },
    'phone.allowedCountries',
    'a non-empty array like ["RU"]',
  ],
  [
    'an allowed country in lowercase',
    { api, phone: { allowedCountries: ['ru'] } },
    'phone.allowedCountries[0]',
    'an ISO 3166 alpha-2 code (got',
  ],
  [
    'no allowed number types',
    { api, phone: { allowedTypes: [] } },
    'phone.allowedTypes',
    'a non-empty array like ["MOBILE"]',
  ],
  [
    'an expiry, in seconds',
    { api, expirySeconds: 0 },
    'expirySeconds',
    'whole number of seconds from 1 to 600',
  ],
  [
    'a balance watch without its threshold',
    { api, balanceWatch: { intervalMs: 1000 } },
    'balanceWatch.threshold',
    'non-negative number (got undefined)',
  ],
];

/** Boots, and what it resolves to: [case, options, what the resolved options hold]. */
const BOOTS: BootCase[] = [
  [
    'a resend cooldown switched off',
    { api, limits: { resendCooldownMs: false } },
    (r) => r.limits.resendCooldownMs,
    false,
  ],
  [
    'the longest hold equal to the hold',
    pumping({ holdMs: 60_000, maxHoldMs: 60_000 }) as never,
    (r) => r.limits.pumping && [r.limits.pumping.holdMs, r.limits.pumping.maxHoldMs],
    [60_000, 60_000],
  ],
  [
    'priors given as null: the default ones',
    pumping({ expectedConversion: null }) as never,
    (r) => r.limits.pumping && r.limits.pumping.expectedConversion,
    { default: 0.8 },
  ],
  [
    'a surge factor of 1',
    pumping({ surgeFactor: 1 }) as never,
    (r) => r.limits.pumping && r.limits.pumping.surgeFactor,
    1,
  ],
  [
    'priors by country, and a default',
    pumping({ expectedConversion: { default: 0.7, RU: 0.85 } }) as never,
    (r) => r.limits.pumping && r.limits.pumping.expectedConversion,
    { default: 0.7, RU: 0.85 },
  ],
  [
    'safe numbers, ranges and owners at their longest',
    safeList({
      numbers: ['+79161234567', '+791612345678901'],
      ranges: ['+7', '+79161234567890'],
      owners: ['o'.repeat(200), 'owner-1'],
    }) as never,
    (r) => r.limits.pumping && r.limits.pumping.safeList.owners.length,
    2,
  ],
  [
    'waiting share switched off',
    fallback({ waitingShare: false }) as never,
    (r) => r.orchestration.fallback && r.orchestration.fallback.waitingShare,
    false,
  ],
  [
    'a floor equal to the default ceiling, the ceiling left out',
    fallback({ floorMs: 90_000 }) as never,
    (r) => r.orchestration.fallback && r.orchestration.fallback.floorMs,
    90_000,
  ],
  [
    'a ceiling equal to its floor',
    fallback({ floorMs: 20_000, ceilingMs: 20_000 }) as never,
    (r) => r.orchestration.fallback && r.orchestration.fallback.ceilingMs,
    20_000,
  ],
  [
    'orchestration methods of which one is offered',
    { api, methods: ['sms'], orchestration: { methods: ['sms', 'flash_call'] } } as never,
    (r) => r.orchestration.methods,
    ['sms', 'flash_call'],
  ],
  [
    'handle and data keys of 32 characters',
    { api, handleKey: KEY, dataKey: KEY },
    (r) => r.handleKey.length,
    32,
  ],
  [
    'a balance threshold of 0',
    { api, balanceWatch: { intervalMs: 1000, threshold: 0 } },
    (r) => r.balanceWatch?.threshold,
    0,
  ],
  [
    'every log level',
    { api, logLevels: ['log', 'error', 'warn', 'debug', 'verbose', 'fatal'] },
    (r) => r.logLevels,
    ['log', 'error', 'warn', 'debug', 'verbose', 'fatal'],
  ],
];

describe('option rules: the shapes a careless rule would let through', () => {
  itRefusesAndBoots(REFUSED, BOOTS);
});

describe('option rules: the host clock against a given store', () => {
  const store = new MemoryStore({ clock: () => 1_000_000 });
  afterAll(() => store.close());

  it('a clock a second from the store boots; a millisecond more is refused, naming the distance', () => {
    for (const offset of [0, 1000, -1000])
      expect(resolveVerificationOptions({ api, store, clock: () => 1_000_000 + offset }).clock()).toBe(
        1_000_000 + offset,
      );
    const error = refusal({ api, store, clock: () => 1_001_001 });
    expect([error.field, error.message]).toStrictEqual(['clock', expect.stringContaining('by 1001 ms')]);
  });
});
