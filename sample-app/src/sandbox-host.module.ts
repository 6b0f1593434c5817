import {
  Inject,
  Injectable,
  Logger,
  Module,
  type DynamicModule,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { VerificationSandbox } from 'nestjs-phone-verification/testing';
import { assertSandboxModeAllowed, readLiveApiSettings } from './verification-env.js';
import { VerificationTarget } from './verification-target.js';

/** `from-environment`: the real API when configured, else the sandbox. `sandbox`: always the sandbox (tests). */
export type TargetChoice = 'from-environment' | 'sandbox';
const TARGET_CHOICE = Symbol('TARGET_CHOICE');

/** Starts the embedded sandbox unless the real API is configured (and chosen). */
async function createVerificationTarget(
  config: ConfigService,
  choice: TargetChoice,
): Promise<VerificationTarget> {
  if (choice === 'from-environment' && readLiveApiSettings(config)) return VerificationTarget.live();
  assertSandboxModeAllowed(config);
  // Auto-delivery: SMS, messenger codes and flash calls "arrive" a second after the start, as on a real phone.
  const sandbox = await VerificationSandbox.start({ port: 0, demoAccount: { autoDeliver: true } });
  new Logger('SampleApp').log(`sandbox mode: embedded sandbox listening on ${sandbox.url}`);
  return VerificationTarget.embedded(sandbox);
}

/** Stops the embedded sandbox with the application. */
@Injectable()
class EmbeddedSandboxCloser implements OnApplicationShutdown {
  constructor(@Inject(VerificationTarget) private readonly target: VerificationTarget) {}

  async onApplicationShutdown(): Promise<void> {
    await this.target.sandbox?.close();
  }
}

/**
 * Provides the VerificationTarget (and with it, in sandbox mode, the running sandbox) to the whole
 * app, before VerificationModule's options factory needs it.
 */
@Module({})
export class SandboxHostModule {
  static forRoot(choice: TargetChoice): DynamicModule {
    return {
      module: SandboxHostModule,
      global: true,
      providers: [
        { provide: TARGET_CHOICE, useValue: choice },
        {
          provide: VerificationTarget,
          useFactory: createVerificationTarget,
          inject: [ConfigService, TARGET_CHOICE],
        },
        EmbeddedSandboxCloser,
      ],
      exports: [VerificationTarget],
    };
  }
}
