// A fresh NestJS host app in plain JavaScript that imports the packed package exactly as users do.
import 'reflect-metadata';
import { Body, Controller, HttpCode, Inject, Module, Post, Req, UseFilters } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { EventEmitter2, EventEmitterModule } from '@nestjs/event-emitter';
import {
  PhoneChange,
  RequireVerifiedPhone,
  VerificationModule,
  VerificationProblemFilter,
  VerifiedPhone,
} from 'nestjs-phone-verification';
import { VerificationSandbox } from 'nestjs-phone-verification/testing';

const [baseUrl, apiKey, apiSecret] = process.argv.slice(2);

/** A change of phone as the docs show it (decorators applied by hand: plain JavaScript). */
class AccountController {
  constructor(phoneChange) {
    this.phoneChange = phoneChange;
  }

  async change(req, verificationId, stepUp) {
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
Inject(PhoneChange)(AccountController, undefined, 0);
Req()(AccountController.prototype, 'change', 0);
Body('verification_id')(AccountController.prototype, 'change', 1);
VerifiedPhone('details')(AccountController.prototype, 'change', 2);
Reflect.decorate(
  [Post('phone'), HttpCode(200), RequireVerifiedPhone({ purpose: 'step_up' })],
  AccountController.prototype,
  'change',
  Object.getOwnPropertyDescriptor(AccountController.prototype, 'change'),
);
Reflect.decorate([Controller('account'), UseFilters(VerificationProblemFilter)], AccountController);

class AppModule {}
Module({
  imports: [
    EventEmitterModule.forRoot(),
    VerificationModule.forRoot({
      api: { baseUrl, apiKey, apiSecret },
      limits: { enabled: false },
      // The test moves the sandbox's clock, not this process's: every status poll asks the API.
      statusCache: { enabled: false },
      // The signed-in user (the change of phone): the `x-user` header stands for the host's session.
      owner: (req) => req.headers['x-user'],
    }),
  ],
  controllers: [AccountController],
})(AppModule);

const app = await NestFactory.create(AppModule, { logger: false, rawBody: true, abortOnError: false });
app.get(EventEmitter2).on('verification.*', () => undefined);
app
  .get(EventEmitter2)
  .on('verification.phone_changed', (event) =>
    console.log(JSON.stringify({ event: event.event, owner: event.owner })),
  );
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
