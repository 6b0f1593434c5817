/**
 * A host that changes its users' numbers with PhoneChange, as the docs show: its own user table (a map
 * of owner → number, a compare-and-set rebind that answers `taken` for another account's number), a
 * change route, the same route behind the step-up guard (the step-up's claim confirms the old number),
 * and a guarded route that tells whether a verification or claim still opens it. The owner is `x-user`.
 */
import { Body, Controller, HttpCode, Injectable, Post, Req, UseFilters } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import type { PhoneChangedEvent } from '../../src/core/verification-events.js';
import { PhoneChange, type PhoneChangeFacts } from '../../src/guard/phone-change.js';
import { RequireVerifiedPhone, VerifiedPhone } from '../../src/guard/verified-phone.decorators.js';
import type { VerifiedPhoneDetails } from '../../src/guard/verified-phone.request.js';
import { VerificationProblemFilter } from '../../src/http/verification-problem.filter.js';
import type { VerificationModuleOptions } from '../../src/options/verification.options.js';
import type { VerificationSandbox } from '../../src/testing/index.js';
import { call, createTestApp, type Platform, type TestApp } from '../support/verification-app.js';
import { storeFor, type StoreKind } from '../verified-phone/guard-host.js';
import { moduleOptions } from '../webhooks/harness.js';
import { MemoryStore } from '../../src/store/memory.store.js';
import { dumpMemoryStore, dumpRedisPrefix } from '../support/store-dump.js';
import { sharedRedisUrl } from '../support/redis-server.js';

/** The host's user table. */
@Injectable()
export class Users {
  readonly phones = new Map<string, string | null>();
  /** Every rebind the module asked for, in order. */
  readonly rebinds: PhoneChangeFacts[] = [];
  /** The next rebind throws (the host's database fails). */
  failNext = false;

  /** Moves `owner` to the new number while it still holds the old one; another account's number is `taken`. */
  async rebind(change: PhoneChangeFacts): Promise<void | 'taken'> {
    this.rebinds.push(change);
    // A real host awaits its database here: the change is in flight for a while.
    await new Promise((resolve) => setImmediate(resolve));
    if (this.failNext) {
      this.failNext = false;
      throw new Error('the users database is down');
    }
    if ([...this.phones].some(([owner, phone]) => owner !== change.owner && phone === change.newPhoneNumber))
      return 'taken';
    if ((this.phones.get(change.owner) ?? null) !== change.oldPhoneNumber)
      throw new Error('the number changed meanwhile');
    this.phones.set(change.owner, change.newPhoneNumber);
  }
}

type Sent = { verification_id?: string; old_confirmation?: string };

@Controller('account')
@UseFilters(VerificationProblemFilter)
export class AccountController {
  constructor(
    private readonly phoneChange: PhoneChange,
    private readonly users: Users,
  ) {}

  @Post('phone')
  @HttpCode(200)
  change(@Req() request: { headers: Record<string, string> }, @Body() body: Sent) {
    return this.changeFor(request, body, body.old_confirmation);
  }

  /** Behind the step-up guard: the step-up (header or claim header) confirms the old number. */
  @Post('phone/stepped')
  @HttpCode(200)
  @RequireVerifiedPhone({ purpose: 'step_up' })
  stepped(
    @Req() request: { headers: Record<string, string> },
    @Body() body: Sent,
    @VerifiedPhone('details') stepUp: VerifiedPhoneDetails,
  ) {
    return this.changeFor(request, body, stepUp.claim);
  }

  /** What a verification or claim of any purpose opens: the number, and a claim of it. */
  @Post('whoami')
  @HttpCode(200)
  @RequireVerifiedPhone()
  whoami(@VerifiedPhone('details') details: VerifiedPhoneDetails) {
    return { phone: details.phoneNumber, purpose: details.purpose ?? null, claim: details.claim };
  }

  private async changeFor(
    request: { headers: Record<string, string> },
    body: Sent,
    oldConfirmation?: string,
  ) {
    const owner = request.headers['x-user'] ?? '';
    const result = await this.phoneChange.change({
      request,
      verificationId: String(body.verification_id ?? ''),
      currentPhoneNumber: this.users.phones.get(owner) ?? null,
      ...(oldConfirmation === undefined ? {} : { oldConfirmation }),
      rebind: (change) => this.users.rebind(change),
    });
    return { changed_at: result.changedAt.toISOString(), next_change_at: result.nextChangeAt.toISOString() };
  }
}

export interface PhoneChangeHost {
  app: TestApp;
  /** Every `key value` line its store holds (a store dump). */
  dump(): Promise<string[]>;
  /** Closes the app, and the MemoryStore instance it was given (a store it did not make stays open). */
  close(): Promise<void>;
  users: Users;
  events: PhoneChangedEvent[];
}

/** Boots the host on `platform` with its store on `storeKind`. */
export async function bootPhoneChangeHost(
  platform: Platform,
  sb: VerificationSandbox,
  storeKind: StoreKind,
  extra: Partial<VerificationModuleOptions> = {},
): Promise<PhoneChangeHost> {
  const store = storeFor(storeKind, sb);
  const app = await createTestApp({
    platform,
    module: moduleOptions(sb, { store, ...extra }),
    controllers: [AccountController],
    providers: [Users],
  });
  const events: PhoneChangedEvent[] = [];
  app.app
    .get(EventEmitter2)
    .on('verification.phone_changed', (event: PhoneChangedEvent) => void events.push(event));
  const close = async () => {
    await app.close();
    if ('close' in store) await (store as { close(): Promise<void> }).close();
  };
  const dump = async () =>
    store instanceof MemoryStore
      ? dumpMemoryStore(store)
      : dumpRedisPrefix(sharedRedisUrl(), (store as { keyPrefix: string }).keyPrefix);
  return { app, close, dump, users: app.app.get(Users), events };
}

let serial = 0;
/** A number no other test of this process uses. */
export const phoneNumber = () =>
  `+7916555${String(process.pid % 100).padStart(2, '0')}${String(++serial % 100).padStart(2, '0')}`;

/** The helpers of one booted host. */
export function driver(sandbox: () => VerificationSandbox, host: () => PhoneChangeHost) {
  const url = () => host().app.url;
  /** A verification of `phone` by `user` for `purpose` (none: no purpose), verified by the user's own call. */
  async function verified(user: string, phone: string, purpose?: string): Promise<string> {
    const started = await call(
      url(),
      'POST',
      '/verification/start',
      { phone_number: phone, method: 'reverse_flash_call', ...(purpose ? { purpose } : {}) },
      { 'x-user': user },
    );
    if (started.status !== 201) throw new Error(`start: ${started.status} ${started.text}`);
    const sb = sandbox();
    const session = sb
      .sessionsFor(phone)
      .find((s) => s.method === 'reverse_flash_call' && s.status !== 'verified' && s.status !== 'expired')!;
    await sb.call(session.request_id as string, phone);
    return String(started.body.verification_id);
  }
  return {
    verified,
    change: (user: string, body: Sent, headers: Record<string, string> = {}, path = '/account/phone') =>
      call(url(), 'POST', path, body, { 'x-user': user, ...headers }),
    /** What `/account/whoami` answers for a verification id or a claim. */
    whoami: (user: string, proof: { id?: string; claim?: string }) =>
      call(
        url(),
        'POST',
        '/account/whoami',
        {},
        {
          'x-user': user,
          ...(proof.id === undefined ? {} : { 'x-verification-id': proof.id }),
          ...(proof.claim === undefined ? {} : { 'x-verified-phone-claim': proof.claim }),
        },
      ),
  };
}
