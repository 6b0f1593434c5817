import 'reflect-metadata';
import {
  Controller,
  Get,
  Module,
  type DynamicModule,
  type INestApplication,
  type LoggerService,
  type Provider,
  type Type,
} from '@nestjs/common';
import { EventEmitter2, EventEmitterModule } from '@nestjs/event-emitter';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { Agent } from 'node:http';
import request from 'supertest';
import { VerificationModule } from '../../src/module/verification.module.js';
import type { VerificationModuleOptions } from '../../src/options/verification.options.js';
import type { VerificationEvent } from '../../src/core/verification-events.js';

export type Platform = 'express' | 'fastify';
/** Both platforms: for suites where the HTTP layer is what is tested (routes, webhooks, bodies, host boundary, stream). */
export const PLATFORMS: Platform[] = ['express', 'fastify'];
/**
 * One platform: for suites of the rules behind the routes (protection, events, reconciler, several
 * instances, operations), which the platform does not change; the route suites cover both.
 */
export const ONE_PLATFORM: Platform[] = ['express'];

/** A host app's own route, to prove the module leaves the host's routes and errors alone. */
@Controller('host')
class HostController {
  @Get('ping')
  ping(): { pong: true } {
    return { pong: true };
  }
}

export interface TestApp {
  app: INestApplication;
  /** `http://127.0.0.1:PORT` of the listening app. */
  url: string;
  /** Every verification.* event the host received, in order. */
  events: VerificationEvent[];
  /** Every ops event (balance_low, balance_insufficient, spend_cap_reached). */
  opsEvents: { name: string; payload: unknown }[];
  close(): Promise<void>;
}

export interface CreateTestAppOptions {
  platform: Platform;
  /** Module options, or a ready DynamicModule (forRootAsync cases). */
  module: VerificationModuleOptions | DynamicModule;
  imports?: (Type | DynamicModule)[];
  /** The host's own providers (APP_GUARD, APP_FILTER, ...) and controllers, beside the module. */
  providers?: Provider[];
  controllers?: Type[];
  /** Fastify's bodyLimit (default here 64 KiB; Fastify's own default is 1 MiB). */
  bodyLimit?: number;
  rawBody?: boolean;
  /** Nest's own body parsers (default true); false for a host that registers its own in `parsers`. */
  bodyParser?: boolean;
  /** The host's own body parsers, set on the app before it starts. */
  parsers?: (app: INestApplication) => void;
  /** Express `trust proxy` / Fastify `trustProxy`. */
  trustProxy?: boolean;
  /** The app's logger (default: none). */
  logger?: LoggerService;
  /** `app.setGlobalPrefix(...)` before the app starts (the client routes and the webhook move under it). */
  globalPrefix?: string;
}

/** Boots a host app with the module on a real port (Express or Fastify). */
export async function createTestApp(options: CreateTestAppOptions): Promise<TestApp> {
  const verificationModule =
    'module' in options.module && typeof (options.module as DynamicModule).module === 'function'
      ? (options.module as DynamicModule)
      : VerificationModule.forRoot(options.module as VerificationModuleOptions);

  @Module({
    imports: [
      EventEmitterModule.forRoot({ wildcard: false }),
      verificationModule,
      ...(options.imports ?? []),
    ],
    controllers: [HostController, ...(options.controllers ?? [])],
    providers: options.providers ?? [],
  })
  class HostModule {}

  const builder = Test.createTestingModule({ imports: [HostModule] });
  if (options.logger) builder.setLogger(options.logger);
  const ref = await builder.compile();
  const rawBody = options.rawBody ?? true;
  let app: INestApplication;
  if (options.platform === 'fastify') {
    // Imported here: Fastify's load (about a tenth of a second of CPU in each spec file) is paid only by the
    // files that boot a Fastify host, not by the suites that run on Express alone.
    const { FastifyAdapter } = await import('@nestjs/platform-fastify');
    app = ref.createNestApplication<NestFastifyApplication>(
      new FastifyAdapter({
        trustProxy: options.trustProxy ?? false,
        bodyLimit: options.bodyLimit ?? 64 * 1024,
      }),
      { rawBody, bodyParser: options.bodyParser, logger: options.logger ?? false },
    );
  } else {
    app = ref.createNestApplication({
      rawBody,
      bodyParser: options.bodyParser,
      logger: options.logger ?? false,
    });
    if (options.trustProxy)
      (app.getHttpAdapter().getInstance() as { set(k: string, v: unknown): void }).set('trust proxy', true);
  }
  if (options.globalPrefix !== undefined) app.setGlobalPrefix(options.globalPrefix);
  options.parsers?.(app);
  const events: VerificationEvent[] = [];
  const opsEvents: { name: string; payload: unknown }[] = [];
  const emitter = app.get(EventEmitter2);
  for (const name of [
    'verification.verified',
    'verification.failed',
    'verification.expired',
    'verification.code_required',
    'verification.verified_again',
  ])
    emitter.on(name, (payload: VerificationEvent) => void events.push(payload));
  for (const name of [
    'verification.balance_low',
    'verification.balance_insufficient',
    'verification.spend_cap_reached',
    'verification.fraud_suspected',
    'verification.ledger_drift',
  ])
    emitter.on(name, (payload: unknown) => void opsEvents.push({ name, payload }));
  await app.listen(0, '127.0.0.1');
  const address = app.getHttpServer().address() as { port: number };
  return { app, url: `http://127.0.0.1:${address.port}`, events, opsEvents, close: () => app.close() };
}

/**
 * One connection pool for the suites' calls, as a browser or a client keeps its connections. An idle
 * connection is closed after 2 s, before a host's own keep-alive time-out (Node's 5 s): Node's agent
 * ignores the server's `Keep-Alive: timeout` hint when given no `timeout`, so a call that picked a
 * connection as the host closed it failed with `read ECONNRESET` (a 500-session suite under load).
 */
const keptAlive = new Agent({ keepAlive: true, timeout: 2_000 });

/** JSON request helper (supertest) over real HTTP, returning status, headers and parsed body. */
export async function call(
  url: string,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; body: Record<string, unknown>; text: string }> {
  let req = (method === 'GET' ? request(url).get(path) : request(url).post(path))
    .agent(keptAlive)
    .set(headers);
  if (body !== undefined)
    req = req
      .set('content-type', headers['content-type'] ?? 'application/json')
      .send(typeof body === 'string' ? body : JSON.stringify(body));
  // Keep the body as text whatever its content type (problem+json, HTML from a host's parser, empty).
  const res = await req.buffer(true).parse((stream, done) => {
    let data = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => (data += chunk));
    stream.on('end', () => done(null, data));
  });
  const text = typeof res.body === 'string' ? res.body : '';
  const responseHeaders = new Headers();
  for (const [name, value] of Object.entries(res.headers as Record<string, string | string[] | undefined>))
    // Each value appended: `get` joins them with ', ' as before, `getSetCookie()` lists the cookies one by one.
    for (const one of value === undefined ? [] : [value].flat()) responseHeaders.append(name, one);
  return { status: res.status, headers: responseHeaders, body: parseJsonObject(text), text };
}

function parseJsonObject(text: string): Record<string, unknown> {
  try {
    return text ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
