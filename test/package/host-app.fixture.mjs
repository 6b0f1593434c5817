// A fresh NestJS host app in plain JavaScript that imports the packed package exactly as users do.
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { EventEmitter2, EventEmitterModule } from '@nestjs/event-emitter';
import { VerificationModule } from 'nestjs-phone-verification';
import { VerificationSandbox } from 'nestjs-phone-verification/testing';

const [baseUrl, apiKey, apiSecret] = process.argv.slice(2);

class AppModule {}
Module({
  imports: [
    EventEmitterModule.forRoot(),
    VerificationModule.forRoot({
      api: { baseUrl, apiKey, apiSecret },
      limits: { enabled: false },
      // The test moves the sandbox's clock, not this process's: every status poll asks the API.
      statusCache: { enabled: false },
    }),
  ],
})(AppModule);

const app = await NestFactory.create(AppModule, { logger: false, rawBody: true, abortOnError: false });
app.get(EventEmitter2).on('verification.*', () => undefined);
for (const name of ['verification.verified', 'verification.code_required']) {
  app
    .get(EventEmitter2)
    .on(name, (event) => console.log(JSON.stringify({ event: event.event, method: event.method })));
}
await app.listen(0, '127.0.0.1');
console.log(
  JSON.stringify({ port: app.getHttpServer().address().port, sandbox: typeof VerificationSandbox.start }),
);
process.on('SIGTERM', () => app.close().then(() => process.exit(0)));
