/**
 * A host app that throttles globally with @nestjs/throttler and imports VerificationModule. Run
 * by plain Node in a child process (see throttler.e2e.part.ts): @nestjs/throttler is CommonJS and
 * requires @nestjs/common, which is ES modules only since Nest 12; Node >= 20.19 loads that
 * (require of ESM), jest's module runtime does not. Serves one app per platform of `PLATFORMS`
 * (`LISTENING <platform> <port>` for each), then prints `READY`.
 */
import 'reflect-metadata';
import { Controller, Get, Module, type INestApplication } from '@nestjs/common';
import { APP_GUARD, NestFactory } from '@nestjs/core';
import { EventEmitterModule } from '@nestjs/event-emitter';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { ThrottlerGuard, ThrottlerModule } from '@nestjs/throttler';
import { VerificationModule } from '../../../src/module/verification.module.js';

const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
};

@Controller('host-limited')
class HostLimitedController {
  @Get()
  get(): { ok: true } {
    return { ok: true };
  }
}

@Module({
  imports: [
    EventEmitterModule.forRoot(),
    ThrottlerModule.forRoot([{ ttl: 60_000, limit: Number(env('THROTTLE_LIMIT')) }]),
    VerificationModule.forRoot({
      api: { baseUrl: env('SANDBOX_URL'), apiKey: env('API_KEY'), apiSecret: env('API_SECRET') },
      reconcile: { enabled: false },
      limits: { startPerIp: { points: 2, windowMs: 3_600_000 }, resendCooldownMs: false },
    }),
  ],
  controllers: [HostLimitedController],
  providers: [{ provide: APP_GUARD, useClass: ThrottlerGuard }],
})
class HostModule {}

async function boot(platform: string): Promise<INestApplication> {
  const app =
    platform === 'fastify'
      ? await NestFactory.create(HostModule, new FastifyAdapter({ trustProxy: true }), { logger: false })
      : await NestFactory.create(HostModule, { logger: false });
  if (platform !== 'fastify')
    (app.getHttpAdapter().getInstance() as { set(k: string, v: unknown): void }).set('trust proxy', true);
  await app.listen(0, '127.0.0.1');
  process.stdout.write(`LISTENING ${platform} ${(app.getHttpServer().address() as { port: number }).port}\n`);
  return app;
}

// One app per platform in this one process (each its own module instance and throttler storage): one
// Node start-up serves both.
const apps: INestApplication[] = [];
for (const platform of env('PLATFORMS').split(',')) apps.push(await boot(platform));
process.stdout.write('READY\n');
process.on('SIGTERM', () => void Promise.all(apps.map((app) => app.close())).then(() => process.exit(0)));
