/**
 * A host of the module for PhoneChange.change itself, the call a host makes from its own change route
 * (the problem document of a refusal is what VerificationProblemFilter sends): its verifications as a
 * table of facts (`id` → facts; the e2e suites read real ones), the module's own store, claims and
 * revocation marks on one clock the tests move, and what the host sees: its rebinds, the
 * `verification.phone_changed` events and the log lines.
 */
import { EventEmitter2 } from '@nestjs/event-emitter';
import type { PhoneChangedEvent } from '../../src/core/verification-events.js';
import { VerificationClientError, type VerificationError } from '../../src/core/verification.errors.js';
import { VerificationLogger } from '../../src/observability/verification-logger.js';
import { VerificationMetrics } from '../../src/observability/verification-metrics.js';
import { VerificationTelemetry } from '../../src/observability/verification-telemetry.js';
import { resolveVerificationOptions } from '../../src/options/verification-options.resolver.js';
import type { VerificationModuleOptions } from '../../src/options/verification.options.js';
import { RECORD_RETENTION_MS } from '../../src/sessions/session-record.repository.js';
import { SubjectIndex } from '../../src/sessions/subject-index.js';
import { MemoryStore } from '../../src/store/memory.store.js';
import type { VerifiedFacts } from '../../src/verification/verification.views.js';
import type { VerificationService } from '../../src/verification/verification.service.js';
import type { GuardReadMeter } from '../../src/guard/guard-read-meter.js';
import { PhoneChange, type PhoneChangeFacts, type PhoneChangeRequest } from '../../src/guard/phone-change.js';
import { VerifiedPhoneClaims } from '../../src/guard/verified-phone-claims.js';

export const T0 = 1_800_000_000_000;
export const OLD = '+79161234567';
export const NEW = '+79167654321';
export const COOLDOWN_MS = 120_000;
export const CLAIM_TTL_MS = 300_000;
export const TWO_DAYS_MS = 2 * 86_400_000;

export type Facts = VerifiedFacts | Error;
export const verifiedFor =
  (purpose: string | undefined, phoneNumber = NEW, ago = 1_000) =>
  (now: number): VerifiedFacts => ({
    status: 'verified',
    phoneNumber,
    verifiedAt: new Date(now - ago),
    test: false,
    ...(purpose === undefined ? {} : { purpose }),
  });

/** A host of the module on one clock: its verifications (`id` → facts), rebinds, events and log lines. */
export function host(extra: Partial<VerificationModuleOptions> = {}, events = true) {
  const clock = { now: T0 };
  const lines: string[] = [];
  const log = (line: unknown) => void lines.push(String(line));
  const options = resolveVerificationOptions({
    api: { baseUrl: 'http://127.0.0.1:9', apiKey: 'key', apiSecret: 'secret-secret-secret' },
    clock: () => clock.now,
    owner: (request: unknown) => (request as { user?: unknown }).user as string,
    phoneChange: { cooldownMs: COOLDOWN_MS },
    purposes: { change_phone: { claimTtlMs: CLAIM_TTL_MS }, archive: { claimTtlMs: TWO_DAYS_MS } },
    logger: { log, warn: log, error: log },
    ...extra,
  });
  const store = new MemoryStore({ clock: () => clock.now });
  const subjects = new SubjectIndex(store, options.dataKeys, RECORD_RETENTION_MS);
  const claims = new VerifiedPhoneClaims(options, subjects);
  const facts = new Map<string, (now: number) => Facts>([['new', verifiedFor('change_phone')]]);
  const verification = {
    verifiedFacts: async (id: string) => {
      const found = facts.get(id)?.(clock.now) ?? new VerificationClientError('not_found');
      if (found instanceof Error) throw found;
      return found;
    },
  } as unknown as VerificationService;
  const meter = { take: async () => true } as unknown as GuardReadMeter;
  const telemetry = new VerificationTelemetry(
    new VerificationLogger(options),
    VerificationMetrics.disabled(),
  );
  const emitter = events ? new EventEmitter2() : undefined;
  const emitted: PhoneChangedEvent[] = [];
  emitter?.on('verification.phone_changed', (event: PhoneChangedEvent) => void emitted.push(event));
  const service = new PhoneChange(options, store, verification, claims, subjects, meter, telemetry, emitter);
  const rebinds: PhoneChangeFacts[] = [];
  const change = (input: Partial<PhoneChangeRequest> & { user?: unknown } = {}) => {
    const { user, ...rest } = input;
    return service.change({
      request: { user: 'user' in input ? user : 'alice' },
      verificationId: 'new',
      currentPhoneNumber: OLD,
      rebind: async (facts) => void rebinds.push(facts),
      ...rest,
    });
  };
  /** The problem document the route sends for a refused change, with its Retry-After. */
  const refusal = (input: Parameters<typeof change>[0] = {}) =>
    change(input).then(
      () => {
        throw new Error('the change was made');
      },
      (error: VerificationError & { retryAfterSeconds?: number }) => ({
        ...(error.getResponse() as Record<string, unknown>),
        retry_after: error.retryAfterSeconds,
      }),
    );
  /** Adds a listener of `verification.phone_changed`, as a host's own. */
  const listen = (listener: () => unknown): void => {
    emitter?.on('verification.phone_changed', listener);
  };
  return { clock, lines, facts, claims, store, service, listen, emitted, rebinds, change, refusal };
}
