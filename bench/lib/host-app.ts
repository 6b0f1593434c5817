import 'reflect-metadata';
import type { ServerResponse } from 'node:http';
import { Controller, Get, Module, Res, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { EventEmitter2, EventEmitterModule } from '@nestjs/event-emitter';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { VerificationEvent } from '../../src/core/verification-events.js';
import { VerificationStore } from '../../src/store/verification-store.interface.js';
import { VerificationModule } from '../../src/module/verification.module.js';
import type { LimitsOptions, VerificationModuleOptions } from '../../src/options/verification.options.js';

export type Platform = 'express' | 'fastify';

const EVENT_NAMES = [
  'verification.verified',
  'verification.failed',
  'verification.expired',
  'verification.code_required',
] as const;

/** A host app as JSON (it crosses the IPC channel): functions are built from the flags. */
export interface HostConfig {
  platform: Platform;
  module: Omit<VerificationModuleOptions, 'clock' | 'limits' | 'store' | 'owner' | 'logger'> & {
    limits?: Omit<LimitsOptions, 'key' | 'beforeStart'>;
  };
  /** The module's clock is real time plus an offset that `advanceClock` moves, in step with the sandbox's. */
  clockOffset?: boolean;
  /** `limits.key` = this request header: one distinct client per request in throughput runs. */
  keyHeader?: string;
  /** A RedisStore at this URL instead of the default MemoryStore. */
  redis?: { url: string; keyPrefix: string };
  /**
   * `GET /bench/hold`: answers an event-stream head and never ends, the platform's own cost of an
   * open response (the push benchmark subtracts it to get the module's share per stream).
   */
  holdRoute?: boolean;
  /** Keep every emitted `(request_id, event)` (the soak checks them); otherwise only counts. */
  recordEvents?: boolean;
}

/** What the host's listeners saw. */
export interface EventTally {
  total: number;
  byName: Record<string, number>;
  /** `(request_id, event)` pairs emitted more than once (only with recordEvents). */
  repeated: number;
  /** request_id → event names in order (only with recordEvents). */
  perSession?: Record<string, string[]>;
}

export interface HostApp {
  app: INestApplication;
  url: string;
  tally(withSessions?: boolean): EventTally;
  resetTally(): void;
  advanceClock(ms: number): void;
  store: VerificationStore;
  close(): Promise<void>;
}

/**
 * Boots a NestJS host app with the module on a free loopback port: Express or Fastify, no logger,
 * `rawBody` on (the webhook route verifies signatures over the raw bytes).
 */
@Controller('bench')
class HoldController {
  @Get('hold')
  hold(@Res() response: unknown): void {
    const reply = response as { raw?: ServerResponse; hijack?: () => void };
    if (reply.hijack) reply.hijack();
    const raw = reply.raw ?? (response as ServerResponse);
    raw.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store' });
    raw.write(': held\n\n');
  }
}

/** `redisClient`: the store's Redis connection, given (an ioredis client) instead of opened from `config.redis.url`. */
export async function startHostApp(
  config: HostConfig,
  clock?: () => number,
  redisClient?: unknown,
): Promise<HostApp> {
  let offset = 0;
  const keyHeader = config.keyHeader;
  const options: VerificationModuleOptions = {
    ...config.module,
    limits: {
      ...config.module.limits,
      ...(keyHeader ? { key: (req: unknown) => header(req, keyHeader) } : {}),
    },
    ...(config.redis
      ? {
          store: redisClient
            ? { redis: redisClient, keyPrefix: config.redis.keyPrefix }
            : { url: config.redis.url, keyPrefix: config.redis.keyPrefix },
        }
      : {}),
    ...(clock ? { clock } : config.clockOffset ? { clock: () => Date.now() + offset } : {}),
  };

  @Module({
    imports: [EventEmitterModule.forRoot({ wildcard: false }), VerificationModule.forRoot(options)],
    controllers: config.holdRoute ? [HoldController] : [],
  })
  class BenchHostModule {}

  const app: INestApplication =
    config.platform === 'fastify'
      ? await NestFactory.create<NestFastifyApplication>(
          BenchHostModule,
          new FastifyAdapter({ bodyLimit: 64 * 1024 }),
          { rawBody: true, logger: false },
        )
      : await NestFactory.create(BenchHostModule, { rawBody: true, logger: false });
  app.enableShutdownHooks();

  let byName: Record<string, number> = {};
  let total = 0;
  let repeated = 0;
  let perSession = new Map<string, string[]>();
  const emitter = app.get(EventEmitter2);
  for (const name of EVENT_NAMES)
    emitter.on(name, (event: VerificationEvent) => {
      total++;
      byName[name] = (byName[name] ?? 0) + 1;
      if (!config.recordEvents) return;
      const seen = perSession.get(event.requestId) ?? [];
      if (seen.includes(name)) repeated++;
      seen.push(name);
      perSession.set(event.requestId, seen);
    });

  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as { port: number };
  return {
    app,
    url: `http://127.0.0.1:${port}`,
    store: app.get<VerificationStore>(VerificationStore),
    tally: (withSessions = false) => ({
      total,
      byName: { ...byName },
      repeated,
      ...(withSessions ? { perSession: Object.fromEntries(perSession) } : {}),
    }),
    resetTally: () => {
      byName = {};
      total = 0;
      repeated = 0;
      perSession = new Map();
    },
    advanceClock: (ms) => {
      offset += ms;
    },
    close: () => app.close(),
  };
}

function header(req: unknown, name: string): string | undefined {
  const value = (req as { headers?: Record<string, string | string[] | undefined> }).headers?.[name];
  return typeof value === 'string' ? value : undefined;
}
