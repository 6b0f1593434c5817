/**
 * Run by optional-peers.spec.ts in a child process whose hooks hide every optional peer
 * (hide-optional-peers.hooks.mjs). Boots a host app with the package's public entry point against the
 * sandbox, starts a verification, asks the health indicator (up, then down), and tries each option that
 * needs an optional peer (metrics, the axios transport, a store by URL). Prints one JSON line with what happened.
 */
import 'reflect-metadata';
import { Module, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { EventEmitterModule } from '@nestjs/event-emitter';
import {
  VerificationApiClient,
  VerificationHealthIndicator,
  VerificationModule,
  type VerificationModuleOptions,
} from '../../../src/index.js';
import { VerificationSandbox } from '../../../src/testing/index.js';

async function hidden(name: string): Promise<boolean> {
  try {
    await import(name);
    return false;
  } catch (error) {
    return (error as { code?: string }).code === 'ERR_MODULE_NOT_FOUND';
  }
}

async function boot(options: VerificationModuleOptions): Promise<INestApplication> {
  @Module({ imports: [EventEmitterModule.forRoot(), VerificationModule.forRoot(options)] })
  class HostModule {}
  const app = await NestFactory.create(HostModule, { logger: false, abortOnError: false });
  await app.listen(0, '127.0.0.1');
  return app;
}

const sb = await VerificationSandbox.start({ port: 0 });
const options: VerificationModuleOptions = {
  api: { baseUrl: sb.url, apiKey: sb.demoAccount.apiKey, apiSecret: sb.demoAccount.apiSecret },
  clock: () => sb.now(),
  limits: { enabled: false },
  balanceWatch: { intervalMs: 3_600_000, threshold: 100 },
};
const result: Record<string, unknown> = {
  terminusHidden: await hidden('@nestjs/terminus'),
  promClientHidden: await hidden('prom-client'),
  swaggerHidden: await hidden('@nestjs/swagger'),
  axiosHidden: (await hidden('axios')) && (await hidden('@nestjs/axios')),
  redisHidden: (await hidden('ioredis')) && (await hidden('redis')),
};

const app = await boot(options);
const { port } = app.getHttpServer().address() as { port: number };
const start = await fetch(`http://127.0.0.1:${port}/verification/start`, {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ phone_number: '+79123450901', method: 'sms' }),
});
result.startStatus = start.status;
const health = app.get(VerificationHealthIndicator);
result.healthUp = await health.isHealthy('verification');
// Below the threshold, where the host asked a low balance to be only degraded: terminus 12's shape, without terminus.
await sb.updateAccount(sb.demoAccount.apiKey, { balance: 50 });
result.healthDegraded = await health.isHealthy('verification', { lowBalance: 'degraded' });
await sb.updateAccount(sb.demoAccount.apiKey, { balance: 0 });
result.healthDown = await health.isHealthy('verification');
await app.close();

/** Boots with `extra` and reports how the boot ended: 'booted', or the error's name and message. */
async function bootOutcome(extra: Partial<VerificationModuleOptions>): Promise<unknown> {
  try {
    const booted = await boot({ ...options, ...extra });
    await booted.close();
    return 'booted';
  } catch (error) {
    return { name: (error as Error).name, message: (error as Error).message };
  }
}

result.metricsBoot = await bootOutcome({ metrics: { enabled: true } });
result.axiosBoot = await bootOutcome({ api: { ...options.api, transport: 'axios' } });
// A standalone client on the axios transport: its first call says what to install (its option is `transport`).
const standalone = VerificationApiClient.create({ ...options.api, transport: 'axios' });
result.standaloneAxios = await standalone.getBalance().then(
  () => 'answered',
  (error: Error) => ({ name: error.name, message: error.message }),
);
standalone.close();
result.storeUrlBoot = await bootOutcome({ store: { url: 'redis://:s3cret-pass@127.0.0.1:1' } });
await sb.close();
process.stdout.write(`${JSON.stringify(result)}\n`);
