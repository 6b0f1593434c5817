// A NestJS host app as CommonJS teams write it: TypeScript with decorators, compiled by tsc to CommonJS
// (`require()` calls), requiring the packed package. The test copies it into a fresh app as src/main.ts.
import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { EventEmitterModule } from '@nestjs/event-emitter';
import type { AddressInfo } from 'node:net';
import {
  OnVerificationEvent,
  VerificationModule,
  type VerificationEvent,
  type VerificationModuleOptions,
} from 'nestjs-phone-verification';
import { VerificationSandbox } from 'nestjs-phone-verification/testing';

const [baseUrl, apiKey, apiSecret] = process.argv.slice(2);

const options: VerificationModuleOptions = {
  api: { baseUrl, apiKey, apiSecret },
  limits: { enabled: false },
  // The test moves the sandbox's clock, not this process's: every status poll asks the API.
  statusCache: { enabled: false },
};

@Injectable()
class VerificationListener {
  @OnVerificationEvent('verified')
  onVerified(event: VerificationEvent): void {
    console.log(JSON.stringify({ event: event.event, method: event.method }));
  }

  @OnVerificationEvent('code_required')
  onCodeRequired(event: VerificationEvent): void {
    console.log(JSON.stringify({ event: event.event, method: event.method }));
  }
}

@Module({
  imports: [EventEmitterModule.forRoot(), VerificationModule.forRoot(options)],
  providers: [VerificationListener],
})
class AppModule {}

async function bootstrap(): Promise<void> {
  const app = await NestFactory.create<NestExpressApplication>(AppModule, {
    logger: false,
    rawBody: true,
    abortOnError: false,
  });
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as AddressInfo;
  console.log(JSON.stringify({ port, sandbox: typeof VerificationSandbox.start }));
  process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
}

void bootstrap();
