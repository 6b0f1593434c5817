import { afterAll, describe, expect, it } from '@jest/globals';
import { API_CLIENT_OPTION_RULES, resolveApiClientOptions } from '../api/api-client.options.js';
import { MemoryStore } from '../store/memory.store.js';
import {
  api,
  itRefusesEachCase,
  refusal,
  SECRET,
  thrown,
  type RefusalCase,
} from '../../test/support/option-refusals.js';
import { INTEGRATOR_FEATURE_OPTION_RULES } from './integrator-features.rules.js';
import { LIMITS_OPTION_RULES } from './limits.rules.js';
import { PURPOSES_OPTION_RULES } from './purposes.rules.js';
import { ORCHESTRATION_OPTION_RULES } from './orchestration.rules.js';
import { VERIFICATION_OPTION_RULES } from './verification-options.rules.js';
import { declaredAsyncRoutes, resolveVerificationOptions } from './verification-options.resolver.js';
import { WEBHOOK_AND_ROUTE_OPTION_RULES } from './webhooks-and-routes.rules.js';

const hostStore = new MemoryStore();
afterAll(() => hostStore.close());

/** The groups' rules, whose cases are in their own specs (limits.rules.spec.ts, …). */
const GROUP_RULES = new Set([
  ...WEBHOOK_AND_ROUTE_OPTION_RULES,
  ...ORCHESTRATION_OPTION_RULES,
  ...LIMITS_OPTION_RULES,
  ...INTEGRATOR_FEATURE_OPTION_RULES,
  ...PURPOSES_OPTION_RULES,
]);

/**
 * One wrong value per rule of the table outside the groups: [case, options, field named, words of the
 * message]. The table's own test holds the table to these cases and the groups' specs to theirs.
 */
const CASES: RefusalCase[] = [
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

  ['dataKey', { api, dataKey: 'k'.repeat(31) }, 'dataKey', 'must be at least 32 characters'],
  ['dataKey', { api, dataKey: 42 }, 'dataKey', 'non-empty string'],

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
];

describe('the option table: each rule refuses what it should, naming the field', () => {
  itRefusesEachCase(
    CASES,
    VERIFICATION_OPTION_RULES.filter((rule) => !GROUP_RULES.has(rule)),
  );

  it.each([1, 600])('expirySeconds %d, an end of its range (intRange takes both), boots', (v) => {
    expect(() => resolveVerificationOptions({ api, expirySeconds: v })).not.toThrow();
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
    expect(routes).toStrictEqual({
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
