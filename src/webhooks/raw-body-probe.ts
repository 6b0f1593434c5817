import { Readable } from 'node:stream';

/** What is read of the app's HTTP adapter (Nest's HttpAdapterHost.httpAdapter): its platform and server. */
export interface ProbedAdapter {
  getType(): string;
  getInstance(): unknown;
}

/** A JSON body as small as the probe needs. */
const PROBE_BODY = '{}';

/**
 * Whether the app's JSON body parser keeps the raw bytes (`NestFactory.create(AppModule, { rawBody: true })`),
 * found by handing that very parser one small JSON body, off the network: true or false when the parser
 * ran, undefined when no parser could be found or run (an application context without HTTP, a platform or
 * parser the probe does not know; the module then says nothing rather than something wrong). Read once Nest
 * registered its parsers: at `onApplicationBootstrap`.
 */
export async function keepsRawJsonBody(
  adapter: ProbedAdapter | null | undefined,
): Promise<boolean | undefined> {
  // null in NestFactory's application context, undefined in a testing module used without an app.
  if (adapter === undefined || adapter === null) return undefined;
  const type = adapter.getType();
  // Express and Fastify as Nest sets them up; a shape they no longer have, or a parser that throws, lands in
  // the catch: no verdict.
  try {
    if (type === 'express') return await expressKeepsRawBody(adapter.getInstance() as ExpressApp);
    if (type === 'fastify')
      return await fastifyKeepsRawBody(adapter.getInstance() as Record<symbol, unknown>);
    return undefined;
  } catch {
    return undefined;
  }
}

type Middleware = (req: unknown, res: unknown, next: (error?: unknown) => void) => unknown;
interface ExpressApp {
  router: { stack: { handle: Middleware }[] };
}

/** Express: the first `jsonParser` of the app's stack (Nest's, or the host's own that Nest then leaves alone). */
async function expressKeepsRawBody(app: ExpressApp): Promise<boolean | undefined> {
  const parser = app.router.stack.find((layer) => layer.handle.name === 'jsonParser')?.handle;
  if (parser === undefined) return undefined;
  const request = Object.assign(Readable.from([Buffer.from(PROBE_BODY)]), {
    method: 'POST',
    url: '/',
    headers: { 'content-type': 'application/json', 'content-length': String(PROBE_BODY.length) },
  }) as Readable & { body?: unknown; rawBody?: unknown };
  await new Promise<void>((resolve, reject) => {
    parser(request, {}, (error?: unknown) => (error === undefined ? resolve() : reject(error)));
  });
  // A body that was not parsed means the parser did not take the probe: no verdict.
  if (request.body === undefined) return undefined;
  return Buffer.isBuffer(request.rawBody);
}

interface FastifyParser {
  fn: (
    this: unknown,
    request: unknown,
    body: Buffer,
    done: (error: unknown, body?: unknown) => void,
  ) => unknown;
}

/** Fastify: the content-type parser that takes `application/json` (Nest's, or Fastify's own without Nest's). */
async function fastifyKeepsRawBody(instance: Record<symbol, unknown>): Promise<boolean | undefined> {
  const symbol = Object.getOwnPropertySymbols(instance).find(
    (candidate) => candidate.description === 'fastify.contentTypeParser',
  );
  const parsers = instance[symbol!] as { getParser(type: string): FastifyParser | undefined };
  // None when the host removed Fastify's parsers and added no catch-all.
  const parser = parsers.getParser('application/json');
  if (parser === undefined) return undefined;
  const request: { rawBody?: unknown } = {};
  let parsed: unknown;
  const returned = parser.fn.call(instance, request, Buffer.from(PROBE_BODY), (error, body) => {
    if (error === null || error === undefined) parsed = body;
  });
  if (returned instanceof Promise) parsed = await returned;
  if (parsed === undefined) return undefined;
  return Buffer.isBuffer(request.rawBody);
}

/** The boot warning of an app that serves the webhook route at `path` without keeping raw bodies. */
export function rawBodyMissingAtBoot(path: string): string {
  return (
    `VerificationModule: the webhook route POST ${path} checks signatures over the raw request body, and ` +
    'this app does not keep it (`rawBody`). Create the app with `NestFactory.create(AppModule, { rawBody: true })` ' +
    '(Express and Fastify alike); until then every webhook is answered 503 service_unavailable.'
  );
}
