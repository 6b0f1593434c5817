import { toAccountView } from './sandbox-accounts.js';
import type { SandboxContext } from './sandbox-context.js';
import { camelPopulation } from './sandbox-control.types.js';
import { decodeSegment } from './sandbox-http.js';
import { toControlView } from './sandbox-session.js';
import { toUserPlanView } from './sandbox-users.js';
import type { SandboxAccountInput } from './sandbox.options.js';
import { notFound, SandboxProblem, validationError } from './problem.js';

export interface ControlReply {
  status: number;
  body: unknown;
}

/** snake_case fields of the control API's account bodies, and their in-process names. */
const ACCOUNT_FIELDS: Record<string, keyof SandboxAccountInput> = {
  api_key: 'apiKey',
  api_secret: 'apiSecret',
  webhook_secret: 'webhookSecret',
  webhook_url: 'webhookUrl',
  balance: 'balance',
  enabled_methods: 'enabledMethods',
  prices: 'prices',
  auto_deliver: 'autoDeliver',
  code_attempts: 'codeAttempts',
  rate_limit_per_second: 'rateLimitPerSecond',
  disabled: 'disabled',
  population: 'population',
};

/** A control body's account fields as `SandboxAccountInput` (unknown fields are refused: typos should be loud). */
export function accountInputFromWire(body: unknown): SandboxAccountInput {
  if (body === undefined) return {};
  const input = asObject(body);
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(input)) {
    const name = ACCOUNT_FIELDS[key];
    if (!name) throw validationError(`unknown account field ${key}`);
    out[name] = name === 'population' && value !== null ? camelPopulation(value) : value;
  }
  return out as SandboxAccountInput;
}

function asObject(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw validationError('The body must be a JSON object.');
  }
  return body as Record<string, unknown>;
}

/**
 * The `/_sandbox` control API: plays the end user's phone and the world (no Basic auth). `path` is the
 * part after `/_sandbox`.
 */
export function handleControl(
  ctx: SandboxContext,
  method: string,
  path: string,
  query: URLSearchParams,
  body: unknown,
): ControlReply {
  const { state } = ctx;
  const segments = path.split('/').filter(Boolean).map(decodeSegment);
  const [first, second, third] = segments;
  const route = `${method} ${first ?? ''}${segments.length > 1 ? '/:id' : ''}${third ? `/${third}` : ''}`;
  switch (route) {
    case 'POST accounts': {
      const account = state.createAccount(accountInputFromWire(body));
      return { status: 201, body: toAccountView(account) };
    }
    case 'GET accounts/:id': {
      const account = state.accounts.get(second!);
      if (!account) throw notFound(`No account ${second}.`);
      return { status: 200, body: toAccountView(account) };
    }
    case 'PATCH accounts/:id':
      return { status: 200, body: toAccountView(state.accounts.update(second!, accountInputFromWire(body))) };
    case 'GET sessions': {
      const phone = query.get('phone_number');
      if (!phone) throw validationError('phone_number is required, e.g. ?phone_number=%2B79991234567');
      return { status: 200, body: { sessions: state.forPhone(phone).map(toControlView) } };
    }
    case 'GET sessions/:id': {
      const session = state.get(second!.toLowerCase());
      if (!session) throw notFound('No such verification session.');
      return { status: 200, body: toControlView(session) };
    }
    case 'GET sessions/:id/user': {
      const session = state.get(second!.toLowerCase());
      if (!session) throw notFound('No such verification session.');
      if (!session.user) {
        throw new SandboxProblem(
          409,
          'not_applicable',
          `No simulated user: the account's population did not cover ${session.method} when the session started.`,
        );
      }
      return { status: 200, body: toUserPlanView(session, session.user) };
    }
    case 'PUT users/:id':
      return { status: 200, body: state.users.declare(second, asObject(body).device) };
    case 'POST sessions/:id/deliver':
      return actionReply(ctx, second!, state.deliver(second!));
    case 'POST sessions/:id/share':
      return actionReply(ctx, second!, state.share(second!, asObject(body).phone_number));
    case 'POST sessions/:id/call':
      return actionReply(ctx, second!, state.call(second!, asObject(body).from));
    case 'POST sessions/:id/operator':
      return actionReply(ctx, second!, state.operator(second!, asObject(body).outcome));
    case 'POST sessions/:id/recalculate':
      return actionReply(ctx, second!, state.recalculate(second!, asObject(body ?? {}).amount));
    case 'POST sessions/:id/fail':
      return actionReply(ctx, second!, state.failSession(second!));
    case 'GET clock':
      return { status: 200, body: clockBody(ctx) };
    case 'POST clock': {
      const advanceMs = asObject(body).advance_ms;
      if (typeof advanceMs !== 'number' || !Number.isFinite(advanceMs) || advanceMs < 0) {
        throw validationError('advance_ms must be a number >= 0');
      }
      ctx.advance(advanceMs);
      return { status: 200, body: clockBody(ctx) };
    }
    case 'POST faults':
      ctx.faults.add(body);
      return { status: 201, body: { ok: true } };
    case 'DELETE faults':
      ctx.faults.clear();
      return { status: 200, body: { ok: true } };
    case 'GET webhooks': {
      // `?request_id=` narrows the log to one session's deliveries.
      const requestId = query.get('request_id')?.toLowerCase();
      const deliveries = ctx.webhooks.deliveries();
      return {
        status: 200,
        body: {
          deliveries: requestId ? deliveries.filter((d) => d.request_id === requestId) : deliveries,
        },
      };
    }
    case 'GET requests':
      return { status: 200, body: { counts: ctx.counts.all() } };
    case 'DELETE requests':
      ctx.counts.reset();
      return { status: 200, body: { counts: {} } };
    default:
      throw new SandboxProblem(404, 'not_found', `No control route ${method} /_sandbox${path}.`);
  }
}

function actionReply(
  ctx: SandboxContext,
  requestId: string,
  action: { result: string; detail: string },
): ControlReply {
  const session = ctx.state.get(requestId.toLowerCase())!;
  return { status: 200, body: { ...toControlView(session), result: action.result, detail: action.detail } };
}

/** The sandbox clock: ms since the epoch (as `sb.now()`) and the same instant in ISO. */
function clockBody(ctx: SandboxContext): { now: number; now_iso: string } {
  const now = ctx.clock.now();
  return { now, now_iso: new Date(now).toISOString() };
}
