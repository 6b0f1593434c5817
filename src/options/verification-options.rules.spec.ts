import { afterAll, describe, expect, it } from '@jest/globals';
import { API_CLIENT_OPTION_RULES, resolveApiClientOptions } from '../api/api-client.options.js';
import { VerificationOptionsError } from '../core/option-rules.js';
import { MemoryStore } from '../store/memory.store.js';
import { VERIFICATION_METHODS } from '../core/verification-method.js';
import { VERIFICATION_OPTION_RULES } from './verification-options.rules.js';
import { declaredAsyncRoutes, resolveVerificationOptions } from './verification-options.resolver.js';
import type { RouteSettings, VerificationModuleOptions } from './verification.options.js';

const api = { baseUrl: 'http://127.0.0.1:1', apiKey: 'k', apiSecret: 's' };
const SECRET = 'whsec_c2VjcmV0';
const hostStore = new MemoryStore();
afterAll(() => hostStore.close());

/** Calls `run` and returns what it threw (failing when nothing was thrown). */
function thrown(run: () => unknown): VerificationOptionsError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(VerificationOptionsError);
    return error as VerificationOptionsError;
  }
  throw new Error('expected a VerificationOptionsError');
}

const refusal = (options: unknown, declared?: RouteSettings) =>
  thrown(() => resolveVerificationOptions(options as VerificationModuleOptions, declared));

/**
 * One wrong value per rule of the table: [options, field named, words of the message]. The last
 * test holds the table to these cases, so that a rule added without a case fails here.
 */
const CASES: [string, unknown, string, string][] = [
  ['options not an object', 'nope', '(root)', 'must be an options object'],
  ['api missing', {}, 'api', 'is required: { baseUrl, apiKey, apiSecret }'],
  [
    'api.baseUrl missing',
    { api: { apiKey: 'k', apiSecret: 's' } },
    'api.baseUrl',
    'must be a non-empty string',
  ],
  [
    'api.baseUrl not a URL',
    { api: { ...api, baseUrl: 'localhost:1' } },
    'api.baseUrl',
    'absolute http(s) URL',
  ],
  ['api.baseUrl ftp', { api: { ...api, baseUrl: 'ftp://x' } }, 'api.baseUrl', 'absolute http(s) URL'],
  [
    'api.baseUrl with credentials',
    { api: { ...api, baseUrl: 'http://u:pw@h' } },
    'api.baseUrl',
    'must not contain credentials',
  ],
  ['api.apiKey empty', { api: { ...api, apiKey: ' ' } }, 'api.apiKey', 'must be a non-empty string'],
  ['api.apiSecret missing', { api: { ...api, apiSecret: undefined } }, 'api.apiSecret', 'non-empty string'],
  ['api.timeoutMs', { api: { ...api, timeoutMs: 0 } }, 'api.timeoutMs', 'must be a positive integer (got 0)'],
  [
    'api.maxRetries',
    { api: { ...api, maxRetries: 1.5 } },
    'api.maxRetries',
    'non-negative integer (got 1.5)',
  ],
  [
    'api.retryDeadlineMs',
    { api: { ...api, retryDeadlineMs: -1 } },
    'api.retryDeadlineMs',
    'positive integer',
  ],
  ['api.maxRetryAfterMs', { api: { ...api, maxRetryAfterMs: -1 } }, 'api.maxRetryAfterMs', 'non-negative'],
  ['api.transport', { api: { ...api, transport: 'fetch' } }, 'api.transport', 'must be "undici" or "axios"'],

  ['webhooks', { api, webhooks: 'on' }, 'webhooks', 'must be an object'],
  [
    'webhooks.secret',
    { api, webhooks: { secret: 'hunter2' } },
    'webhooks.secret',
    'Standard Webhooks secret',
  ],
  [
    'webhooks.secret[]',
    { api, webhooks: { secret: [SECRET, ''] } },
    'webhooks.secret[1]',
    'non-empty string',
  ],
  [
    'webhooks.signature',
    { api, webhooks: { signature: 'hmac' } },
    'webhooks.signature',
    '"standard-webhooks" or "none"',
  ],
  ['webhooks.verifier', { api, webhooks: { verifier: {} } }, 'webhooks.verifier', 'verify(rawBody, headers)'],
  [
    'webhooks.toleranceSeconds',
    { api, webhooks: { toleranceSeconds: 0 } },
    'webhooks.toleranceSeconds',
    'positive',
  ],
  ['webhooks.path', { api, webhooks: { path: '' } }, 'webhooks.path', 'non-empty string'],
  ['webhooks.enabled', { api, webhooks: { enabled: 'yes' } }, 'webhooks.enabled', 'must be true or false'],
  [
    'webhooks.confirmWithApi',
    { api, webhooks: { confirmWithApi: 1 } },
    'webhooks.confirmWithApi',
    'true or false',
  ],
  [
    'webhooks enabled without a secret',
    { api, webhooks: { enabled: true } },
    'webhooks.secret',
    'is required when webhooks are enabled',
  ],
  [
    'signature none with a secret',
    { api, webhooks: { signature: 'none', secret: SECRET } },
    'webhooks.signature',
    'is "none" while a secret or verifier is given',
  ],
  [
    'signature none without confirming',
    { api, webhooks: { signature: 'none', confirmWithApi: false } },
    'webhooks.confirmWithApi',
    'cannot be false with signature: "none"',
  ],

  ['routes', { api, routes: 5 }, 'routes', 'must be an object'],
  ['routes.prefix', { api, routes: { prefix: 'a b' } }, 'routes.prefix', 'must be a URL path (got "a b")'],
  ['routes.enabled', { api, routes: { enabled: 0 } }, 'routes.enabled', 'true or false'],
  ['routes.bodyLimit', { api, routes: { bodyLimit: 0 } }, 'routes.bodyLimit', 'positive integer'],
  [
    'routes.allowedOrigins',
    { api, routes: { allowedOrigins: 'x' } },
    'routes.allowedOrigins',
    'array of origins',
  ],
  [
    'routes.allowedOrigins[]',
    { api, routes: { allowedOrigins: ['https://a.example/path'] } },
    'routes.allowedOrigins[0]',
    'scheme, host and port only',
  ],
  ['methods', { api, methods: [] }, 'methods', 'non-empty array'],
  ['methods[]', { api, methods: ['sms', 'fax'] }, 'methods[1]', 'is not a known method (got "fax"'],
  ['phone', { api, phone: [] }, 'phone', 'must be an object'],
  ['phone.defaultCountry', { api, phone: { defaultCountry: 'ru' } }, 'phone.defaultCountry', 'alpha-2'],
  [
    'phone.defaultCountry UK',
    { api, phone: { defaultCountry: 'UK' } },
    'phone.defaultCountry',
    'did you mean "GB"?',
  ],
  ['phone.allowedCountries', { api, phone: { allowedCountries: [] } }, 'phone.allowedCountries', 'non-empty'],
  [
    'phone.allowedCountries[]',
    { api, phone: { allowedCountries: ['ZZ'] } },
    'phone.allowedCountries[0]',
    'ISO 3166',
  ],
  ['phone.allowedTypes', { api, phone: { allowedTypes: 'MOBILE' } }, 'phone.allowedTypes', 'non-empty array'],
  ['orchestration', { api, orchestration: 'cheap' }, 'orchestration', 'must be an object'],
  [
    'orchestration.methods',
    { api, orchestration: { methods: [] } },
    'orchestration.methods',
    'non-empty array like ["reverse_flash_call", "sms"]',
  ],
  [
    'orchestration.methods[]',
    { api, orchestration: { methods: ['sms', 'pigeon'] } },
    'orchestration.methods[1]',
    'is not a known method (got "pigeon"',
  ],
  [
    'orchestration.methods outside methods',
    { api, methods: ['sms'], orchestration: { methods: ['flash_call'] } },
    'orchestration.methods',
    'names none of the offered "methods"',
  ],
  [
    'orchestration.mode',
    { api, orchestration: { mode: 'cheapest' } },
    'orchestration.mode',
    'must be "price" or "cost_per_success" (got "cheapest")',
  ],
  [
    'orchestration.fallback',
    { api, orchestration: { fallback: true } },
    'orchestration.fallback',
    'or false',
  ],
  [
    'orchestration.fallback.stalledShare',
    { api, orchestration: { fallback: { stalledShare: 1 } } },
    'orchestration.fallback.stalledShare',
    'share from 0 to below 1',
  ],
  [
    'orchestration.fallback.stalledShare 0',
    { api, orchestration: { fallback: { stalledShare: 0 } } },
    'orchestration.fallback.stalledShare',
    'must be above 0',
  ],
  [
    'orchestration.fallback.ceilingMs below floorMs',
    { api, orchestration: { fallback: { floorMs: 20_000, ceilingMs: 15_000 } } },
    'orchestration.fallback.ceilingMs',
    'must be at least floorMs',
  ],
  [
    'orchestration.fallback.floorMs',
    { api, orchestration: { fallback: { floorMs: 500 } } },
    'orchestration.fallback.floorMs',
    'from 1000 to 600000',
  ],
  [
    'orchestration.fallback.minSamples',
    { api, orchestration: { fallback: { minSamples: 0 } } },
    'orchestration.fallback.minSamples',
    'positive integer',
  ],
  [
    'orchestration.minSamples',
    { api, orchestration: { minSamples: 0 } },
    'orchestration.minSamples',
    'positive integer',
  ],
  [
    'limits.pumping.grading',
    { api, limits: { pumping: { grading: 'yes' } } },
    'limits.pumping.grading',
    'must be true or false',
  ],
  [
    'orchestration.minCallers',
    { api, orchestration: { minCallers: 1.5 } },
    'orchestration.minCallers',
    'positive integer',
  ],
  [
    'orchestration.skippable',
    { api, orchestration: { skippable: 'some' } },
    'orchestration.skippable',
    'must be "all" or an array of methods (got "some")',
  ],
  [
    'orchestration.skippable[]',
    { api, orchestration: { skippable: ['fax'] } },
    'orchestration.skippable[0]',
    'is not a known method',
  ],
  [
    'orchestration.timeoutSeconds',
    { api, orchestration: { timeoutSeconds: 30 } },
    'orchestration.timeoutSeconds',
    'must be an object of seconds by method',
  ],
  [
    'orchestration.timeoutSeconds unknown method',
    { api, orchestration: { timeoutSeconds: { fax: 30 } } },
    'orchestration.timeoutSeconds',
    'has an unknown key "fax" (methods: reverse_flash_call',
  ],
  ...VERIFICATION_METHODS.map((method): [string, unknown, string, string] => [
    `orchestration.timeoutSeconds.${method}`,
    { api, orchestration: { timeoutSeconds: { [method]: 0 } } },
    `orchestration.timeoutSeconds.${method}`,
    'must be a whole number of seconds from 1 to 600 (got 0)',
  ]),
  [
    'orchestration.maxSteps',
    { api, orchestration: { maxSteps: 1.5 } },
    'orchestration.maxSteps',
    'positive integer',
  ],
  [
    'orchestration.maxCost',
    { api, orchestration: { maxCost: -1 } },
    'orchestration.maxCost',
    'must be a positive number (got -1)',
  ],
  [
    'orchestration.exclude',
    { api, orchestration: { exclude: ['sms'] } },
    'orchestration.exclude',
    'must be { mobile?, desktop? }',
  ],
  [
    'orchestration.exclude unknown device',
    { api, orchestration: { exclude: { tablet: ['sms'] } } },
    'orchestration.exclude',
    'has an unknown key "tablet" (device hints: mobile, desktop)',
  ],
  ...(['mobile', 'desktop'] as const).flatMap((device): [string, unknown, string, string][] => [
    [
      `orchestration.exclude.${device}`,
      { api, orchestration: { exclude: { [device]: 'sms' } } },
      `orchestration.exclude.${device}`,
      'must be an array of methods',
    ],
    [
      `orchestration.exclude.${device}[]`,
      { api, orchestration: { exclude: { [device]: ['sms', 'tv'] } } },
      `orchestration.exclude.${device}[1]`,
      'is not a known method (got "tv"',
    ],
  ]),
  ['owner', { api, owner: 'me' }, 'owner', 'must be a function'],
  ['clock', { api, clock: 5 }, 'clock', 'must be a function'],
  [
    'clock against the given store',
    { api, clock: () => Date.now() + 86_400_000, store: hostStore },
    'clock',
    'disagrees with the clock of the given store',
  ],
  ['expirySeconds', { api, expirySeconds: 900 }, 'expirySeconds', 'from 1 to 600 (got 900)'],
  ['handleKey', { api, handleKey: 'short' }, 'handleKey', 'at least 32 characters'],
  ['pricesTtlMs', { api, pricesTtlMs: 1.5 }, 'pricesTtlMs', 'positive integer'],
  ['balanceWatch', { api, balanceWatch: 60_000 }, 'balanceWatch', 'must be { intervalMs, threshold }'],
  ['balanceWatch.intervalMs', { api, balanceWatch: { threshold: 1 } }, 'balanceWatch.intervalMs', 'positive'],
  [
    'balanceWatch.threshold',
    { api, balanceWatch: { intervalMs: 1, threshold: -1 } },
    'balanceWatch.threshold',
    'non-negative',
  ],
  ['reconcile', { api, reconcile: true }, 'reconcile', 'must be an object'],
  ['reconcile.enabled', { api, reconcile: { enabled: 'no' } }, 'reconcile.enabled', 'true or false'],
  [
    'reconcile.lazyIntervalMs',
    { api, reconcile: { lazyIntervalMs: 0 } },
    'reconcile.lazyIntervalMs',
    'positive',
  ],
  ['reconcile.graceMs', { api, reconcile: { graceMs: -1 } }, 'reconcile.graceMs', 'non-negative integer'],
  ['reconcile.tickMs', { api, reconcile: { tickMs: 0 } }, 'reconcile.tickMs', 'positive integer'],
  ['statusCache', { api, statusCache: false }, 'statusCache', 'must be an object'],
  ['statusCache.enabled', { api, statusCache: { enabled: 1 } }, 'statusCache.enabled', 'true or false'],
  ['statusStream', { api, statusStream: 1 }, 'statusStream', 'must be an object'],
  ['statusStream.enabled', { api, statusStream: { enabled: 1 } }, 'statusStream.enabled', 'true or false'],
  [
    'statusStream.maxPerClient',
    { api, statusStream: { maxPerClient: 0 } },
    'statusStream.maxPerClient',
    'positive',
  ],
  [
    'statusStream.maxPerVerification',
    { api, statusStream: { maxPerVerification: 1.5 } },
    'statusStream.maxPerVerification',
    'positive',
  ],
  [
    'statusStream.heartbeatMs',
    { api, statusStream: { heartbeatMs: 0 } },
    'statusStream.heartbeatMs',
    'positive',
  ],
  [
    'statusStream.maxDurationMs',
    { api, statusStream: { maxDurationMs: 0 } },
    'statusStream.maxDurationMs',
    'positive',
  ],
  ['logLevels', { api, logLevels: 'log' }, 'logLevels', 'array of log levels or false'],
  ['logLevels[]', { api, logLevels: ['info'] }, 'logLevels[0]', 'is not a log level (got "info")'],
  ['maskPhoneNumbers', { api, maskPhoneNumbers: 'no' }, 'maskPhoneNumbers', 'true or false'],
  ['logger', { api, logger: () => undefined }, 'logger', 'must be a LoggerService'],
  ['metrics', { api, metrics: true }, 'metrics', 'must be { enabled, registry?, prefix? }'],
  ['metrics.enabled', { api, metrics: {} }, 'metrics.enabled', 'must be true or false (got undefined)'],
  [
    'metrics.registry',
    { api, metrics: { enabled: true, registry: {} } },
    'metrics.registry',
    'prom-client Registry',
  ],
  [
    'metrics.prefix',
    { api, metrics: { enabled: true, prefix: 'a.b' } },
    'metrics.prefix',
    'Prometheus metric name',
  ],

  ['limits', { api, limits: 'strict' }, 'limits', 'must be an object'],
  ['limits.enabled', { api, limits: { enabled: 'no' } }, 'limits.enabled', 'true or false'],
  ['limits.coalesceStarts', { api, limits: { coalesceStarts: 1 } }, 'limits.coalesceStarts', 'true or false'],
  [
    'limits.resendCooldownMs',
    { api, limits: { resendCooldownMs: true } },
    'limits.resendCooldownMs',
    'positive',
  ],
  ['limits.key', { api, limits: { key: 'ip' } }, 'limits.key', 'must be a function'],
  ['limits.beforeStart', { api, limits: { beforeStart: {} } }, 'limits.beforeStart', 'must be a function'],
  [
    'limits.ipv6PrefixLength',
    { api, limits: { ipv6PrefixLength: 16 } },
    'limits.ipv6PrefixLength',
    '32 to 128',
  ],
  [
    'limits.spendCap',
    { api, limits: { spendCap: 1000 } },
    'limits.spendCap',
    'must be { amount, windowMs } or false',
  ],
  [
    'limits.spendCap.amount',
    { api, limits: { spendCap: { windowMs: 1 } } },
    'limits.spendCap.amount',
    'positive number',
  ],
  [
    'limits.spendCap.windowMs',
    { api, limits: { spendCap: { amount: 1 } } },
    'limits.spendCap.windowMs',
    'positive',
  ],
  [
    'limits.spendCap.utcOffsetMinutes',
    { api, limits: { spendCap: { amount: 1, windowMs: 1, utcOffsetMinutes: 900 } } },
    'limits.spendCap.utcOffsetMinutes',
    '-720 to 840',
  ],
  [
    'limits.spendCap.worstCasePrice',
    { api, limits: { spendCap: { amount: 1, windowMs: 1, worstCasePrice: 0 } } },
    'limits.spendCap.worstCasePrice',
    'positive number',
  ],
  ...(
    [
      'startPerIp',
      'startPerPhone',
      'startPerPhoneAndCaller',
      'checkPerIp',
      'wrongCodesPerPhone',
      'wrongCodesPerOwner',
    ] as const
  ).flatMap((name): [string, unknown, string, string][] => [
    [
      `limits.${name}`,
      { api, limits: { [name]: 10 } },
      `limits.${name}`,
      'must be { points, windowMs } or false',
    ],
    [
      `limits.${name}.points`,
      { api, limits: { [name]: { points: 0, windowMs: 1 } } },
      `limits.${name}.points`,
      'positive integer (got 0)',
    ],
    [
      `limits.${name}.windowMs`,
      { api, limits: { [name]: { points: 1 } } },
      `limits.${name}.windowMs`,
      'positive',
    ],
  ]),

  ['limits.pumping', { api, limits: { pumping: 'on' } }, 'limits.pumping', 'must be an object ({ mode'],
  [
    'limits.pumping.mode',
    { api, limits: { pumping: { mode: 'block' } } },
    'limits.pumping.mode',
    '"enforce", "monitor" or "off"',
  ],
  [
    'limits.pumping.rangeDigits',
    { api, limits: { pumping: { rangeDigits: 2.5 } } },
    'limits.pumping.rangeDigits',
    '1 to 8',
  ],
  ...(
    [
      'windowMs',
      'rangeMinStarts',
      'prefixMinStarts',
      'freshRangeMinStarts',
      'freshPrefixMinStarts',
      'callerMinStarts',
      'countryMinStarts',
      'underAttackMinStarts',
      'holdMs',
      'maxHoldMs',
      'recordTtlMs',
    ] as const
  ).map((name): [string, unknown, string, string] => [
    `limits.pumping.${name}`,
    { api, limits: { pumping: { [name]: -1 } } },
    `limits.pumping.${name}`,
    'must be a positive integer (got -1)',
  ]),
  [
    'limits.pumping.maxHoldMs below holdMs',
    { api, limits: { pumping: { holdMs: 10_000, maxHoldMs: 5_000 } } },
    'limits.pumping.maxHoldMs',
    'must be at least holdMs',
  ],
  [
    'limits.pumping.holdMs above the default maxHoldMs',
    { api, limits: { pumping: { holdMs: 100_000_000 } } },
    'limits.pumping.maxHoldMs',
    'must be at least holdMs',
  ],
  [
    'limits.pumping.minConversion',
    { api, limits: { pumping: { minConversion: 1 } } },
    'limits.pumping.minConversion',
    'share',
  ],
  [
    'limits.pumping.reserveShare',
    { api, limits: { pumping: { reserveShare: -0.1 } } },
    'limits.pumping.reserveShare',
    'share',
  ],
  [
    'limits.pumping.surgeFactor',
    { api, limits: { pumping: { surgeFactor: 0.5 } } },
    'limits.pumping.surgeFactor',
    'at least 1',
  ],
  [
    'limits.pumping.safeList',
    { api, limits: { pumping: { safeList: [] } } },
    'limits.pumping.safeList',
    '{ numbers?',
  ],
  [
    'limits.pumping.safeList.numbers',
    { api, limits: { pumping: { safeList: { numbers: 'x' } } } },
    'limits.pumping.safeList.numbers',
    'must be an array',
  ],
  [
    'limits.pumping.safeList.numbers[]',
    { api, limits: { pumping: { safeList: { numbers: ['89161234567'] } } } },
    'limits.pumping.safeList.numbers[0]',
    'E.164 number',
  ],
  [
    'limits.pumping.safeList.ranges',
    { api, limits: { pumping: { safeList: { ranges: {} } } } },
    'limits.pumping.safeList.ranges',
    'must be an array',
  ],
  [
    'limits.pumping.safeList.ranges[]',
    { api, limits: { pumping: { safeList: { ranges: ['7916'] } } } },
    'limits.pumping.safeList.ranges[0]',
    'a range like "+7916123"',
  ],
  [
    'limits.pumping.safeList.owners',
    { api, limits: { pumping: { safeList: { owners: 'me' } } } },
    'limits.pumping.safeList.owners',
    'must be an array',
  ],
  [
    'limits.pumping.safeList.owners[]',
    { api, limits: { pumping: { safeList: { owners: [''] } } } },
    'limits.pumping.safeList.owners[0]',
    'a non-empty owner id',
  ],
  ['testNumbers', { api, testNumbers: [] }, 'testNumbers', 'must be { numbers'],
  [
    'testNumbers unknown key',
    { api, testNumbers: { numbers: [], codes: [] } },
    'testNumbers',
    'unknown key "codes"',
  ],
  ['testNumbers.numbers', { api, testNumbers: {} }, 'testNumbers.numbers', 'must be an array'],
  [
    'testNumbers.numbers twice',
    {
      api,
      testNumbers: {
        numbers: [
          { phoneNumber: '+79990000001', code: '1234' },
          { phoneNumber: '+79990000001', code: '1234' },
        ],
      },
    },
    'testNumbers.numbers',
    'names +79990000001 twice',
  ],
  [
    'testNumbers.numbers[]',
    { api, testNumbers: { numbers: ['+79990000001'] } },
    'testNumbers.numbers[0]',
    'must be an object',
  ],
  [
    'testNumbers.numbers[].phoneNumber',
    { api, testNumbers: { numbers: [{ phoneNumber: '+7999', code: '1234' }] } },
    'testNumbers.numbers[0].phoneNumber',
    'an E.164 number',
  ],
  [
    'testNumbers.numbers[].outcome',
    { api, testNumbers: { numbers: [{ phoneNumber: '+79990000001', code: '1234', outcome: 'sent' }] } },
    'testNumbers.numbers[0].outcome',
    'must be "verified", "expired", "failed" or "code_required"',
  ],
  [
    'testNumbers.numbers[].code missing',
    { api, testNumbers: { numbers: [{ phoneNumber: '+79990000001', outcome: 'code_required' }] } },
    'testNumbers.numbers[0].code',
    'is required unless outcome',
  ],
  [
    'testNumbers.numbers[].code not digits (not echoed)',
    { api, testNumbers: { numbers: [{ phoneNumber: '+79990000001', code: '12ab' }] } },
    'testNumbers.numbers[0].code',
    'must be 4 to 8 digits (a string)',
  ],
  [
    'testNumbers.owners',
    { api, testNumbers: { numbers: [], owners: 'me' } },
    'testNumbers.owners',
    'must be an array',
  ],
  [
    'testNumbers.owners[]',
    { api, testNumbers: { numbers: [], owners: [''] } },
    'testNumbers.owners[0]',
    'a non-empty owner id',
  ],
  [
    'testNumbers.maxAttempts',
    { api, testNumbers: { numbers: [], maxAttempts: 1.5 } },
    'testNumbers.maxAttempts',
    'positive integer',
  ],
  [
    'testNumbers.wrongCodesPerNumber',
    { api, testNumbers: { numbers: [], wrongCodesPerNumber: 5 } },
    'testNumbers.wrongCodesPerNumber',
    'must be { points, windowMs }',
  ],
  [
    'testNumbers.wrongCodesPerNumber.points',
    { api, testNumbers: { numbers: [], wrongCodesPerNumber: { windowMs: 1000 } } },
    'testNumbers.wrongCodesPerNumber.points',
    'positive integer',
  ],
  [
    'testNumbers.wrongCodesPerNumber.windowMs',
    { api, testNumbers: { numbers: [], wrongCodesPerNumber: { points: 1, windowMs: 0 } } },
    'testNumbers.wrongCodesPerNumber.windowMs',
    'positive integer',
  ],
  ['verifiedPhone', { api, verifiedPhone: 'x' }, 'verifiedPhone', 'must be { header?'],
  [
    'verifiedPhone.header',
    { api, verifiedPhone: { header: 'x id' } },
    'verifiedPhone.header',
    'an HTTP header name',
  ],
  [
    'verifiedPhone.bodyField',
    { api, verifiedPhone: { bodyField: '' } },
    'verifiedPhone.bodyField',
    'a JSON field name',
  ],
  [
    'verifiedPhone.claimHeader',
    { api, verifiedPhone: { claimHeader: 'a:b' } },
    'verifiedPhone.claimHeader',
    'an HTTP header name',
  ],
  [
    'verifiedPhone.claimTtlMs',
    { api, verifiedPhone: { claimTtlMs: 0 } },
    'verifiedPhone.claimTtlMs',
    'positive integer',
  ],
  ['history', { api, history: true }, 'history', 'must be { retentionDays?, maxEntries? } or false'],
  [
    'history.retentionDays',
    { api, history: { retentionDays: 0 } },
    'history.retentionDays',
    'from 1 to 3650',
  ],
  ['history.maxEntries', { api, history: { maxEntries: 10_001 } }, 'history.maxEntries', 'from 1 to 10000'],
  ['name', { api, name: 'brand b' }, 'name', 'a registration name'],
  [
    'webhooks.decorators',
    { api, webhooks: { decorators: 'x' } },
    'webhooks.decorators',
    'must be an array of class decorators',
  ],
  [
    'webhooks.decorators[]',
    { api, webhooks: { decorators: [1] } },
    'webhooks.decorators[0]',
    'must be a function',
  ],
];

describe('the option table: each rule refuses what it should, naming the field', () => {
  it.each(CASES)('%s', (_name, options, field, words) => {
    const error = refusal(options);
    expect(error.field).toBe(field);
    expect(error.message.startsWith(`VerificationModule: option "${field}" `)).toBe(true);
    expect(error.message).toContain(words);
  });

  it('every rule of the table has a case above', () => {
    const covered = new Set(
      CASES.map(([, , field]) => (field === '(root)' ? '' : field.replace(/\[\d+\]/g, '[]'))),
    );
    const uncovered = VERIFICATION_OPTION_RULES.map((rule) => rule.path).filter((path) => !covered.has(path));
    expect(uncovered).toEqual([]);
  });

  it('a rule under an option switched off with false, or under an absent one, is not applied', () => {
    expect(() =>
      resolveVerificationOptions({ api, limits: { spendCap: false, startPerIp: false, pumping: false } }),
    ).not.toThrow();
    expect(() =>
      resolveVerificationOptions({ api, balanceWatch: undefined, metrics: undefined }),
    ).not.toThrow();
  });

  it('never echoes the API secret, the API key in a URL, or a webhook secret', () => {
    const secret = 'sk_live_do_not_print_me';
    for (const options of [
      { api: { ...api, apiSecret: secret, baseUrl: 'nope' } },
      { api: { ...api, baseUrl: `http://user:${secret}@host` } },
      { api: { ...api, baseUrl: `nope${secret}` } },
      { api, webhooks: { secret: `whsec_${secret}!` } },
      { api, webhooks: { secret: ['whsec_c2VjcmV0', `${secret}`] } },
    ]) {
      const error = refusal(options);
      expect(`${error.message}\n${error.stack}`).not.toContain(secret);
    }
  });
});

describe("the API client's rules are the module's rules under api.", () => {
  const bad: [string, unknown][] = [
    ['baseUrl', 'localhost:1'],
    ['baseUrl', 'http://u:p@h'],
    ['apiKey', ''],
    ['apiSecret', 7],
    ['timeoutMs', 0],
    ['maxRetries', 1.5],
    ['retryDeadlineMs', -5],
    ['maxRetryAfterMs', -1],
    ['transport', 'node'],
  ];

  it.each(bad)('%s = %j: the same problem, in the same words, from both', (field, value) => {
    const client = thrown(() => resolveApiClientOptions({ ...api, [field]: value }));
    const module = refusal({ api: { ...api, [field]: value } });
    expect(client.field).toBe(field);
    expect(module.field).toBe(`api.${field}`);
    expect(client.message.replace('VerificationApiClient: option "', '')).toBe(
      module.message.replace('VerificationModule: option "api.', ''),
    );
  });

  it('the module holds every client rule but the observation hook (the module wires that itself)', () => {
    const modulePaths = VERIFICATION_OPTION_RULES.map((rule) => rule.path);
    for (const rule of API_CLIENT_OPTION_RULES)
      expect(modulePaths.includes(`api.${rule.path}`)).toBe(rule.path !== 'onRequest');
    expect(thrown(() => resolveApiClientOptions({ ...api, onRequest: 1 as never })).field).toBe('onRequest');
  });

  it('a standalone client refuses options that are not an object', () => {
    expect(thrown(() => resolveApiClientOptions(undefined as never)).message).toMatch(
      /^VerificationApiClient: option "\(root\)" must be \{ baseUrl, apiKey, apiSecret, … \}$/,
    );
  });
});

describe('forRootAsync: the options are held to the routes declared at import', () => {
  const declared = (webhooksEnabled: boolean, prefix?: string, path?: string) =>
    declaredAsyncRoutes({ prefix }, { enabled: webhooksEnabled, path });

  it.each([
    [
      'a prefix only the factory gives',
      { api, routes: { prefix: 'other' } },
      declared(false),
      'routes.prefix',
      'routes: { prefix }',
    ],
    [
      'webhooks only the factory configures',
      { api, webhooks: { secret: SECRET } },
      declared(false),
      'webhooks.enabled',
      'must be given statically',
    ],
    [
      'a declared route without a secret',
      { api },
      declared(true),
      'webhooks.secret',
      'the webhook route is declared',
    ],
    [
      'a webhook path only the factory gives',
      { api, webhooks: { secret: SECRET, path: 'elsewhere' } },
      declared(true),
      'webhooks.path',
      'webhooks: { enabled: true, path }',
    ],
  ])('%s is refused, naming %s', (_name, options, routes, field, words) => {
    const error = refusal(options, routes);
    expect(error.field).toBe(field);
    expect(error.message).toContain(words);
  });

  it('agreeing options boot, and a factory may switch a declared webhook route off', () => {
    const routes = declared(true, '/shop/', 'hooks');
    expect(routes).toEqual({
      routes: { prefix: 'shop', enabled: true },
      webhooks: { enabled: true, path: 'shop/hooks', decorators: [] },
    });
    const resolved = resolveVerificationOptions(
      { api, routes: { prefix: 'shop' }, webhooks: { secret: SECRET, path: 'hooks' } },
      routes,
    );
    expect(resolved.routes.prefix).toBe('shop');
    expect(resolved.webhooks.enabled).toBe(true);
    expect(resolveVerificationOptions({ api, webhooks: { enabled: false } }, routes).webhooks.enabled).toBe(
      false,
    );
  });
});
