// A host process as a host runs it: the module from the built package (dist/), its own HTTP server,
// the store the test names (MemoryStore, or Redis by URL), the API transport it names (the default, or axios), and on SIGTERM nothing but `await app.close()`:
// the process must then end by itself. It prints its port, then what is still running once close() resolved.
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { EventEmitterModule } from '@nestjs/event-emitter';
import { VerificationModule } from '../../../dist/index.js';

const [platform, baseUrl, apiKey, apiSecret, webhookSecret, redisUrl, transport] = process.argv.slice(2);

class AppModule {}
Module({
  imports: [
    EventEmitterModule.forRoot(),
    VerificationModule.forRoot({
      api: { baseUrl, apiKey, apiSecret, ...(transport ? { transport } : {}) },
      webhooks: { secret: webhookSecret },
      owner: (req) => req.headers['x-user'],
      ...(redisUrl ? { store: { url: redisUrl, keyPrefix: `pv-closing:${process.pid}:` } } : {}),
    }),
  ],
})(AppModule);

const options = { logger: false, rawBody: true, abortOnError: false };
let app;
if (platform === 'fastify') {
  const { FastifyAdapter } = await import('@nestjs/platform-fastify');
  app = await NestFactory.create(AppModule, new FastifyAdapter(), options);
} else app = await NestFactory.create(AppModule, options);
await app.listen(0, '127.0.0.1');
console.log(JSON.stringify({ port: app.getHttpServer().address().port }));

/** What keeps this process alive beside its standard streams (pipes to the test). */
const running = () => process.getActiveResourcesInfo().filter((r) => r !== 'PipeWrap' && r !== 'TTYWrap');
/** One turn of the event loop: handles whose close close() began finish closing in it. */
const turn = () => new Promise((resolve) => setImmediate(() => setImmediate(resolve)));
process.once('SIGTERM', () => {
  void app
    .close()
    .then(turn)
    .then(() => console.log(JSON.stringify({ runningAfterClose: running() })));
});
