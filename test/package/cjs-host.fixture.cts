// A NestJS host app as CommonJS teams write it: TypeScript with decorators, compiled by tsc to CommonJS
// (`require()` calls), requiring the packed package. The test copies it into a fresh app as src/main.ts.
import 'reflect-metadata';
import { Body, Controller, HttpCode, Injectable, Module, Post, Req, UseFilters } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { EventEmitterModule } from '@nestjs/event-emitter';
import type { AddressInfo } from 'node:net';
import {
  OnVerificationEvent,
  PhoneChange,
  PhoneChangeEventName,
  RequireVerifiedPhone,
  VerificationModule,
  VerificationProblemFilter,
  VerifiedPhone,
  type PhoneChangedEvent,
  type VerificationEvent,
  type VerificationModuleOptions,
  type VerifiedPhoneDetails,
} from 'nestjs-phone-verification';
import { OnEvent } from '@nestjs/event-emitter';
import { VerificationSandbox } from 'nestjs-phone-verification/testing';

const [baseUrl, apiKey, apiSecret] = process.argv.slice(2);

const options: VerificationModuleOptions = {
  api: { baseUrl, apiKey, apiSecret },
  limits: { enabled: false },
  // The test moves the sandbox's clock, not this process's: every status poll asks the API.
  statusCache: { enabled: false },
  // The signed-in user (the change of phone): the `x-user` header stands for the host's session.
  owner: (req) => (req as { headers: Record<string, string | undefined> }).headers['x-user'],
};

/** A change of phone as the docs show it: a step-up in front; the user's number from `x-phone` (its session). */
@Controller('account')
@UseFilters(VerificationProblemFilter)
class AccountController {
  constructor(private readonly phoneChange: PhoneChange) {}

  @Post('phone')
  @HttpCode(200)
  @RequireVerifiedPhone({ purpose: 'step_up' })
  async change(
    @Req() req: { headers: Record<string, string | undefined> },
    @Body('verification_id') verificationId: string,
    @VerifiedPhone('details') stepUp: VerifiedPhoneDetails,
  ) {
    const { changedAt } = await this.phoneChange.change({
      request: req,
      verificationId,
      currentPhoneNumber: req.headers['x-phone'] ?? null,
      oldConfirmation: stepUp.claim,
      rebind: async (change) => void console.log(JSON.stringify({ rebind: change })),
    });
    return { changed_at: changedAt };
  }
}

@Injectable()
class VerificationListener {
  @OnVerificationEvent('verified')
  onVerified(event: VerificationEvent): void {
    console.log(JSON.stringify({ event: event.event, method: event.method }));
  }

  @OnEvent(PhoneChangeEventName.phoneChanged)
  onPhoneChanged(event: PhoneChangedEvent): void {
    console.log(JSON.stringify({ event: event.event, owner: event.owner }));
  }

  @OnVerificationEvent('code_required')
  onCodeRequired(event: VerificationEvent): void {
    console.log(JSON.stringify({ event: event.event, method: event.method }));
  }
}

@Module({
  imports: [EventEmitterModule.forRoot(), VerificationModule.forRoot(options)],
  controllers: [AccountController],
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
