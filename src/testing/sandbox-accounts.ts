import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { DEFAULT_PRICES_KOPECKS } from './sandbox-billing.js';
import { snakePopulation } from './sandbox-control.types.js';
import { rubToKopecks, toWireMoney, type WireMoney } from './sandbox-money.js';
import { parsePopulation, type ResolvedPopulation } from './sandbox-population.js';
import {
  canonicalMethod,
  DEFAULT_BALANCE_RUB,
  DEFAULT_CODE_ATTEMPTS,
  SANDBOX_METHODS,
  type SandboxAccountCredentials,
  type SandboxAccountInput,
  type SandboxMethod,
} from './sandbox.options.js';
import { SandboxProblem, validationError } from './problem.js';

/** A sandbox account: credentials, balance in kopecks, enabled methods, prices, behaviour switches. */
export interface SandboxAccount {
  apiKey: string;
  apiSecret: string;
  webhookSecret: string;
  webhookUrl: string | null;
  balanceKopecks: number;
  enabledMethods: Set<SandboxMethod>;
  pricesKopecks: Record<SandboxMethod, number>;
  autoDeliver: boolean;
  codeAttempts: number;
  rateLimitPerSecond: number | null;
  disabled: boolean;
  /** Fixed one-second window of the rate limit, on the sandbox clock. */
  rateWindowStart: number;
  rateWindowCount: number;
  /** Simulated end users (drawn at initiation), or null: sessions wait for the control API. */
  population: ResolvedPopulation | null;
}

/** What the control API shows of an account (it is a fake account: its secrets are shown on purpose). */
export interface SandboxAccountView {
  api_key: string;
  api_secret: string;
  webhook_secret: string;
  webhook_url: string | null;
  balance: WireMoney;
  enabled_methods: SandboxMethod[];
  prices: Record<SandboxMethod, WireMoney>;
  auto_deliver: boolean;
  code_attempts: number;
  rate_limit_per_second: number | null;
  disabled: boolean;
  /** The population as given (snake_case keys, canonical method names), or null. */
  population: Record<string, unknown> | null;
}

export { canonicalMethod };

export function randomApiSecret(): string {
  return `sk_${randomBytes(24).toString('base64url')}`;
}

export function randomWebhookSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

const sha256 = (value: string): Buffer => createHash('sha256').update(value).digest();

export class SandboxAccounts {
  private readonly accounts = new Map<string, SandboxAccount>();

  get(apiKey: string): SandboxAccount | undefined {
    return this.accounts.get(apiKey);
  }

  create(
    input: SandboxAccountInput,
    defaults: { autoDeliver: boolean; population?: ResolvedPopulation | null },
  ): SandboxAccount {
    const apiKey = input.apiKey ?? `key_${randomBytes(8).toString('hex')}`;
    if (typeof apiKey !== 'string' || !/^[A-Za-z0-9_.-]{1,128}$/.test(apiKey)) {
      throw validationError('api_key must be 1 to 128 characters of A-Z, a-z, 0-9, _ . -');
    }
    if (this.accounts.has(apiKey))
      throw new SandboxProblem(409, 'account_exists', `Account ${apiKey} exists.`);
    const account: SandboxAccount = {
      apiKey,
      apiSecret: randomApiSecret(),
      webhookSecret: randomWebhookSecret(),
      webhookUrl: null,
      balanceKopecks: DEFAULT_BALANCE_RUB * 100,
      enabledMethods: new Set(SANDBOX_METHODS),
      pricesKopecks: { ...DEFAULT_PRICES_KOPECKS },
      autoDeliver: defaults.autoDeliver,
      codeAttempts: DEFAULT_CODE_ATTEMPTS,
      rateLimitPerSecond: null,
      disabled: false,
      rateWindowStart: 0,
      rateWindowCount: 0,
      population: defaults.population ?? null,
    };
    applySettings(account, input);
    this.accounts.set(apiKey, account);
    return account;
  }

  update(apiKey: string, patch: SandboxAccountInput): SandboxAccount {
    const account = this.accounts.get(apiKey);
    if (!account) throw new SandboxProblem(404, 'not_found', `No account ${apiKey}.`);
    if (patch.apiKey !== undefined && patch.apiKey !== apiKey)
      throw validationError('api_key cannot be changed');
    applySettings(account, patch);
    return account;
  }

  /**
   * The account named by a Basic `Authorization` header, or undefined (wrong or missing credentials,
   * or any other scheme: Bearer alone is 401). Secrets are compared by hash in constant time.
   */
  authenticate(header: string | undefined): SandboxAccount | undefined {
    const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header ?? '');
    if (!match) return undefined;
    const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) return undefined;
    const account = this.accounts.get(decoded.slice(0, colon));
    if (!account) return undefined;
    return timingSafeEqual(sha256(decoded.slice(colon + 1)), sha256(account.apiSecret)) ? account : undefined;
  }
}

export function credentialsOf(account: SandboxAccount): SandboxAccountCredentials {
  return { apiKey: account.apiKey, apiSecret: account.apiSecret, webhookSecret: account.webhookSecret };
}

export function toAccountView(account: SandboxAccount): SandboxAccountView {
  const prices = {} as Record<SandboxMethod, WireMoney>;
  for (const method of SANDBOX_METHODS) prices[method] = toWireMoney(account.pricesKopecks[method]);
  return {
    api_key: account.apiKey,
    api_secret: account.apiSecret,
    webhook_secret: account.webhookSecret,
    webhook_url: account.webhookUrl,
    balance: toWireMoney(account.balanceKopecks),
    enabled_methods: SANDBOX_METHODS.filter((m) => account.enabledMethods.has(m)),
    prices,
    auto_deliver: account.autoDeliver,
    code_attempts: account.codeAttempts,
    rate_limit_per_second: account.rateLimitPerSecond,
    disabled: account.disabled,
    population: account.population && snakePopulation(account.population.given),
  };
}

/** Validates every given field first, then applies them all: a bad field changes nothing. */
function applySettings(account: SandboxAccount, input: SandboxAccountInput): void {
  const next: Partial<SandboxAccount> = {};
  if (input.apiSecret !== undefined) {
    if (typeof input.apiSecret !== 'string' || input.apiSecret.length < 1 || input.apiSecret.length > 256) {
      throw validationError('api_secret must be a string of 1 to 256 characters');
    }
    next.apiSecret = input.apiSecret;
  }
  if (input.webhookSecret !== undefined) {
    if (
      typeof input.webhookSecret !== 'string' ||
      !/^whsec_[A-Za-z0-9+/]+={0,2}$/.test(input.webhookSecret)
    ) {
      throw validationError('webhook_secret must be whsec_<base64>');
    }
    next.webhookSecret = input.webhookSecret;
  }
  if (input.webhookUrl !== undefined) {
    if (input.webhookUrl !== null && !isHttpUrl(input.webhookUrl)) {
      throw validationError('webhook_url must be an http(s) URL or null');
    }
    next.webhookUrl = input.webhookUrl;
  }
  if (input.balance !== undefined) {
    const kopecks = rubToKopecks(input.balance);
    if (kopecks === undefined)
      throw validationError('balance must be a RUB amount with at most 2 decimal places');
    next.balanceKopecks = kopecks;
  }
  if (input.enabledMethods !== undefined) {
    if (!Array.isArray(input.enabledMethods))
      throw validationError('enabled_methods must be an array of methods');
    const methods = new Set<SandboxMethod>();
    for (const name of input.enabledMethods) {
      const method = canonicalMethod(name);
      if (!method) throw validationError(`enabled_methods: unknown method ${JSON.stringify(name)}`);
      methods.add(method);
    }
    next.enabledMethods = methods;
  }
  if (input.prices !== undefined) {
    if (typeof input.prices !== 'object' || input.prices === null || Array.isArray(input.prices)) {
      throw validationError('prices must be an object of method to RUB amount');
    }
    const prices = { ...account.pricesKopecks };
    for (const [name, amount] of Object.entries(input.prices)) {
      const method = canonicalMethod(name);
      const kopecks = rubToKopecks(amount);
      if (!method) throw validationError(`prices: unknown method ${JSON.stringify(name)}`);
      if (kopecks === undefined || kopecks < 0)
        throw validationError(`prices.${name} must be a RUB amount >= 0`);
      prices[method] = kopecks;
    }
    next.pricesKopecks = prices;
  }
  if (input.autoDeliver !== undefined) {
    if (typeof input.autoDeliver !== 'boolean') throw validationError('auto_deliver must be a boolean');
    next.autoDeliver = input.autoDeliver;
  }
  if (input.codeAttempts !== undefined) {
    if (!Number.isInteger(input.codeAttempts) || input.codeAttempts < 1 || input.codeAttempts > 100) {
      throw validationError('code_attempts must be an integer from 1 to 100');
    }
    next.codeAttempts = input.codeAttempts;
  }
  if (input.rateLimitPerSecond !== undefined) {
    const limit = input.rateLimitPerSecond;
    if (limit !== null && (!Number.isInteger(limit) || limit < 1)) {
      throw validationError('rate_limit_per_second must be a positive integer or null');
    }
    next.rateLimitPerSecond = limit;
  }
  if (input.disabled !== undefined) {
    if (typeof input.disabled !== 'boolean') throw validationError('disabled must be a boolean');
    next.disabled = input.disabled;
  }
  if (input.population !== undefined) {
    next.population = input.population === null ? null : parsePopulation(input.population);
  }
  Object.assign(account, next);
}

function isHttpUrl(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}
