import { Module, type DynamicModule } from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { EventEmitterModule } from '@nestjs/event-emitter';
import { VerificationModule } from 'nestjs-phone-verification';
import { DemoHostController } from './demo-host.controller.js';
import { DemoUserAccount } from './demo-user-account.service.js';
import { HostEventLog } from './host-event-log.service.js';
import { SandboxHostModule, type TargetChoice } from './sandbox-host.module.js';
import { SimulatedPhoneController } from './simulated-phone.controller.js';
import { verificationOptionsFor } from './verification-options.factory.js';
import { VerificationTarget } from './verification-target.js';
import { VerificationEventsListener } from './verification-events.listener.js';

/**
 * The sample host app: VerificationModule configured through @nestjs/config, as a real host does,
 * its events handled by the host, and the demo's own routes for the page.
 */
@Module({})
export class AppModule {
  static forRoot(target: TargetChoice = 'from-environment'): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot({ isGlobal: true }),
        EventEmitterModule.forRoot(),
        SandboxHostModule.forRoot(target),
        VerificationModule.forRootAsync({
          imports: [ConfigModule],
          // Routes are declared at import; the factory gives the webhook secret (POST /verification/webhooks).
          webhooks: { enabled: true },
          inject: [ConfigService, VerificationTarget],
          useFactory: (config: ConfigService, api: VerificationTarget) => verificationOptionsFor(config, api),
        }),
      ],
      controllers: [DemoHostController, SimulatedPhoneController],
      providers: [DemoUserAccount, HostEventLog, VerificationEventsListener],
    };
  }
}
