import type { SandboxAccount } from './sandbox-accounts.js';
import type { SandboxContext } from './sandbox-context.js';
import type { ApiRoute } from './sandbox-faults.js';
import { decodeSegment } from './sandbox-http.js';
import { toWireMoney } from './sandbox-money.js';
import { takeRateToken } from './sandbox-rate-limit.js';
import { toInitiateResponse, toWireSession } from './sandbox-session.js';
import { summarizeUsage, usageRange } from './sandbox-usage.js';
import { SANDBOX_METHODS } from './sandbox.options.js';
import { forbidden, SandboxProblem } from './problem.js';

export interface ApiRouteMatch {
  route: ApiRoute;
  /** `:id` of `GET /v1/verify/:id`. */
  id?: string;
}

export interface ApiReply {
  status: number;
  body: unknown;
}

/** The API route a request addresses; `allowed` lists the methods of a known path requested with another one. */
export function matchApiRoute(
  method: string,
  pathname: string,
): ApiRouteMatch | { allowed: string } | undefined {
  const fixed: Record<string, ApiRoute> = {
    '/v1/verify': 'POST /v1/verify',
    '/v1/verify/check': 'POST /v1/verify/check',
    '/v1/balance': 'GET /v1/balance',
    '/v1/usage': 'GET /v1/usage',
    '/v1/prices': 'GET /v1/prices',
    '/dashboard/prices': 'GET /dashboard/prices',
  };
  const known = fixed[pathname];
  if (known) {
    const [verb] = known.split(' ');
    return method === verb ? { route: known } : { allowed: verb! };
  }
  const byId = /^\/v1\/verify\/([^/]+)$/.exec(pathname);
  if (byId) {
    return method === 'GET'
      ? { route: 'GET /v1/verify/:id', id: decodeSegment(byId[1]!) }
      : { allowed: 'GET' };
  }
  return undefined;
}

/**
 * Authentication, the 403 condition and the rate limit, in that order: wrong or missing Basic
 * credentials (Bearer alone included) are 401; a disabled account is 403 without body; past the
 * account's rate 429 with `Retry-After`.
 */
export function admit(ctx: SandboxContext, authorization: string | undefined): SandboxAccount {
  const account = ctx.state.accounts.authenticate(authorization);
  if (!account) {
    throw new SandboxProblem(
      401,
      'unauthorized',
      'Wrong or missing Basic credentials (api_key:api_secret).',
      {},
      {
        'www-authenticate': 'Basic realm="verification"',
      },
    );
  }
  if (account.disabled) throw forbidden();
  const retryAfter = takeRateToken(account, ctx.clock.now());
  if (retryAfter !== undefined) {
    throw new SandboxProblem(
      429,
      'rate_limit_exceeded',
      'Too many requests for this account.',
      {},
      {
        'retry-after': String(retryAfter),
      },
    );
  }
  return account;
}

/** Runs an admitted API request. `body` is the parsed JSON body (POST routes) and `query` the URL query. */
export function handleApi(
  ctx: SandboxContext,
  account: SandboxAccount,
  match: ApiRouteMatch,
  body: unknown,
  query: URLSearchParams,
): ApiReply {
  switch (match.route) {
    case 'POST /v1/verify':
      return { status: 201, body: toInitiateResponse(ctx.state.initiate(account, body)) };
    case 'GET /v1/verify/:id':
      return { status: 200, body: toWireSession(ctx.state.find(account, match.id ?? '')) };
    case 'POST /v1/verify/check':
      return { status: 200, body: ctx.state.check(account, body) };
    case 'GET /v1/balance':
      return { status: 200, body: { balance: toWireMoney(account.balanceKopecks) } };
    case 'GET /v1/usage': {
      const range = usageRange(query, ctx.clock.now(), ctx.options.usageDefaultDays);
      return { status: 200, body: summarizeUsage(ctx.state.ofAccount(account.apiKey), range) };
    }
    case 'GET /v1/prices':
    case 'GET /dashboard/prices':
      return { status: 200, body: pricesBody(ctx, account) };
  }
}

/**
 * Prices of the account's enabled methods (shape "not shown"): by default a list
 * `{ currency, prices: [{ method, price: Money }] }`, or with `pricesShape: 'map'`
 * `{ currency, prices: { <method>: Money } }`. Methods carry the guides' names (`msgr1_otp`).
 */
function pricesBody(ctx: SandboxContext, account: SandboxAccount): unknown {
  const methods = SANDBOX_METHODS.filter((m) => account.enabledMethods.has(m));
  if (ctx.options.pricesShape === 'map') {
    return {
      currency: 'RUB',
      prices: Object.fromEntries(methods.map((m) => [m, toWireMoney(account.pricesKopecks[m])])),
    };
  }
  return {
    currency: 'RUB',
    prices: methods.map((method) => ({ method, price: toWireMoney(account.pricesKopecks[method]) })),
  };
}
