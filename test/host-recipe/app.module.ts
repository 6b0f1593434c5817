/**
 * The README's host recipe, as code: a Fastify host with its own auth guard (an APP_GUARD that sets
 * `req.user`), owner binding, VerificationModule.forRootAsync from ConfigService and a listener of
 * the verified event. Only the ConfigModule is a parameter: production loads the environment, the
 * e2e test loads the sandbox's settings and its clock.
 */
import {
  Injectable,
  Module,
  UnauthorizedException,
  type CanActivate,
  type DynamicModule,
  type ExecutionContext,
} from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { EventEmitterModule } from '@nestjs/event-emitter';
import type { FastifyRequest } from 'fastify';
import {
  OnVerificationEvent,
  VerificationModule,
  WebhookControllerBase,
  type VerificationEvent,
} from 'nestjs-phone-verification';

export interface User {
  id: string;
}
/** The request once the guard authenticated it. */
export type AuthedRequest = FastifyRequest & { user?: User };

/** The host's users and their bearer tokens (a real host asks its session store or verifies a JWT). */
@Injectable()
export class Users {
  private readonly byToken = new Map([
    ['token-alice', { id: 'alice' }],
    ['token-bob', { id: 'bob' }],
  ]);
  /** (user id, E.164 number) each time a number was marked verified. */
  readonly verifiedPhones: [string, string][] = [];

  authenticate(token: string | undefined): User | undefined {
    return token === undefined ? undefined : this.byToken.get(token);
  }

  markPhoneVerified(userId: string, phoneNumber: string): void {
    this.verifiedPhones.push([userId, phoneNumber]);
  }
}

@Injectable()
export class BearerAuthGuard implements CanActivate {
  constructor(private readonly users: Users) {}

  canActivate(context: ExecutionContext): boolean {
    // The API's webhooks carry a signature, not a user: the module checks it.
    if (context.getClass().prototype instanceof WebhookControllerBase) return true;
    const req = context.switchToHttp().getRequest<AuthedRequest>();
    const user = this.users.authenticate(req.headers.authorization?.replace(/^Bearer /, ''));
    if (!user) throw new UnauthorizedException();
    req.user = user;
    return true;
  }
}

@Injectable()
export class PhoneVerifiedListener {
  constructor(private readonly users: Users) {}

  @OnVerificationEvent('verified')
  onVerified(event: VerificationEvent): void {
    if (event.owner) this.users.markPhoneVerified(event.owner, event.phoneNumber);
  }
}

export function appModule(
  configModule: DynamicModule | Promise<DynamicModule> = ConfigModule.forRoot({ isGlobal: true }),
): DynamicModule {
  return {
    module: AppModule,
    imports: [
      configModule,
      EventEmitterModule.forRoot(),
      VerificationModule.forRootAsync({
        inject: [ConfigService],
        webhooks: { enabled: true }, // declares POST /verification/webhooks; the factory may switch it off
        useFactory: (config: ConfigService) => {
          const webhookSecret = config.get<string>('VERIFICATION_WEBHOOK_SECRET');
          return {
            api: {
              baseUrl: config.getOrThrow<string>('VERIFICATION_API_URL'),
              apiKey: config.getOrThrow<string>('VERIFICATION_API_KEY'),
              apiSecret: config.getOrThrow<string>('VERIFICATION_API_SECRET'),
            },
            webhooks: webhookSecret ? { secret: webhookSecret } : { enabled: false },
            owner: (req: AuthedRequest) => req.user?.id, // binds each verification to the user
            limits: { key: (req: AuthedRequest) => req.user?.id ?? req.ip },
            clock: config.get<() => number>('VERIFICATION_CLOCK'), // e2e tests: the sandbox's clock
          };
        },
      }),
    ],
    providers: [Users, { provide: APP_GUARD, useClass: BearerAuthGuard }, PhoneVerifiedListener],
  };
}

@Module({})
export class AppModule {}
