import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import { admit, handleApi, matchApiRoute } from './sandbox-api-routes.js';
import type { SandboxContext } from './sandbox-context.js';
import { handleControl } from './sandbox-control-routes.js';
import type { RouteFault } from './sandbox-faults.js';
import { parseJson, readBody, requestUrl, sendJson, sendProblem, sendText } from './sandbox-http.js';
import { notFound, SandboxProblem } from './problem.js';

/** The sandbox's HTTP server: plain node:http, keep-alive, one handler that routes API and control requests. */
export function createSandboxServer(ctx: SandboxContext): http.Server {
  const server = http.createServer((req, res) => {
    void handleRequest(ctx, req, res);
  });
  server.keepAliveTimeout = 5000;
  return server;
}

async function handleRequest(ctx: SandboxContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = requestUrl(req.url);
  try {
    // Due work first, so every answer reflects the clock as it is now (an elapsed TTL is already `expired`).
    ctx.scheduler.runDue();
    if (url.pathname === '/_sandbox' || url.pathname.startsWith('/_sandbox/')) {
      await handleControlRequest(ctx, req, res, url);
      return;
    }
    await handleApiRequest(ctx, req, res, url);
  } catch (err) {
    if (err instanceof SandboxProblem) {
      sendProblem(res, err, url.pathname);
      return;
    }
    // Never a crash and never a stack on the wire; the message goes to the sandbox log only.
    ctx.options.log(`sandbox: unexpected error on ${req.method} ${url.pathname}: ${(err as Error)?.message}`);
    if (res.headersSent) res.destroy();
    else
      sendProblem(
        res,
        new SandboxProblem(500, 'internal_error', 'The sandbox failed unexpectedly.'),
        url.pathname,
      );
  }
}

async function handleControlRequest(
  ctx: SandboxContext,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
): Promise<void> {
  if (!ctx.options.control) throw notFound('The control API is off in this sandbox.');
  const body = parseJson(await readBody(req, ctx.options.maxBodyBytes));
  const reply = handleControl(
    ctx,
    req.method ?? 'GET',
    url.pathname.slice('/_sandbox'.length),
    url.searchParams,
    body,
  );
  sendJson(res, reply.status, reply.body);
}

async function handleApiRequest(
  ctx: SandboxContext,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
): Promise<void> {
  const method = req.method ?? 'GET';
  const match = matchApiRoute(method, url.pathname);
  if (url.pathname.startsWith('/v1/') || url.pathname.startsWith('/dashboard/')) {
    ctx.counts.add(match && 'route' in match ? match.route : `${method} ${url.pathname}`);
  }
  if (!match) throw notFound(`No route ${method} ${url.pathname}.`);
  if ('allowed' in match) {
    throw new SandboxProblem(
      405,
      'method_not_allowed',
      `Use ${match.allowed} on ${url.pathname}.`,
      {},
      {
        allow: match.allowed,
      },
    );
  }

  const fault = ctx.faults.takeRouteFault(match.route);
  if (fault && fault.kind !== 'latency' && fault.kind !== 'field') {
    answerFault(req, res, fault);
    return;
  }
  // The body is read before any latency: a client that gives up waiting has still sent its request.
  const raw = method === 'POST' ? await readBody(req, ctx.options.maxBodyBytes) : Buffer.alloc(0);
  if (fault?.kind === 'latency') {
    // Latency delays the answer in real time (client time-outs are real); the request is still processed.
    // Unref'd: a pending latency must not keep a test process alive after the sandbox is closed.
    await delay(fault.latencyMs, undefined, { ref: false });
    ctx.scheduler.runDue();
  }
  const account = admit(ctx, req.headers.authorization);
  const body = method === 'POST' ? parseJson(raw) : undefined;
  const reply = handleApi(ctx, account, match, body, url.searchParams);
  // A field fault changes what a processed request answers (a hostile link, a broken number).
  if (fault?.field && typeof reply.body === 'object' && reply.body !== null)
    (reply.body as Record<string, unknown>)[fault.field.name] = fault.field.value;
  sendJson(res, reply.status, reply.body);
}

/** A fault's answer in place of processing the request. */
function answerFault(req: IncomingMessage, res: ServerResponse, fault: RouteFault): void {
  switch (fault.kind) {
    case 'reset':
      req.socket.destroy();
      return;
    case 'garbage':
      sendText(res, 200, 'application/json', '{"request_id": "4f1c\u0000 <<not json>>');
      return;
    case 'html':
      sendText(
        res,
        fault.status ?? 502,
        'text/html; charset=utf-8',
        '<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body><h1>Bad Gateway</h1></body></html>',
      );
      return;
    case 'empty':
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': 0 });
      res.end();
      return;
    case 'status':
    default:
      sendProblem(res, faultProblem(fault.status ?? 500, fault.retryAfterS));
  }
}

const FAULT_ERROR_CODES: Record<number, string> = {
  400: 'validation_error',
  401: 'unauthorized',
  402: 'insufficient_balance',
  404: 'not_found',
  409: 'not_pending',
  429: 'rate_limit_exceeded',
  500: 'internal_error',
  502: 'bad_gateway',
  503: 'service_unavailable',
  504: 'gateway_timeout',
};

function faultProblem(status: number, retryAfterS: number): SandboxProblem {
  const headers: Record<string, string> = status === 429 ? { 'retry-after': String(retryAfterS) } : {};
  return new SandboxProblem(
    status,
    FAULT_ERROR_CODES[status] ?? 'error',
    'Injected by a sandbox fault.',
    {},
    headers,
  );
}
