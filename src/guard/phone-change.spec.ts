/**
 * PhoneChange's rollback, where the e2e suites cannot see it: a store whose writes take a round trip
 * (deferred, as a network store's are) shows whether the host's error reaches it only once the old
 * number's verifications count again and the cooldown is given back.
 */
import { describe, expect, it } from '@jest/globals';
import { VerificationLogger } from '../observability/verification-logger.js';
import { VerificationMetrics } from '../observability/verification-metrics.js';
import { VerificationTelemetry } from '../observability/verification-telemetry.js';
import { resolveVerificationOptions } from '../options/verification-options.resolver.js';
import { RECORD_RETENTION_MS } from '../sessions/session-record.repository.js';
import { SubjectIndex } from '../sessions/subject-index.js';
import { MemoryStore } from '../store/memory.store.js';
import type { VerificationService } from '../verification/verification.service.js';
import type { GuardReadMeter } from './guard-read-meter.js';
import { PhoneChange } from './phone-change.js';
import { VerifiedPhoneClaims } from './verified-phone-claims.js';

const now = 1_800_000_000_000;
const OLD = '+79161234567';
const NEW = '+79167654321';

/**
 * A MemoryStore whose writes land some event-loop turns after they are asked for, as a Redis Cluster's
 * do, each key's on its own node: the owner's slot (its revocation marks) answers slower than others.
 */
class RoundTripStore extends MemoryStore {
  override async set(...args: Parameters<MemoryStore['set']>): ReturnType<MemoryStore['set']> {
    await turns(args[0]);
    return super.set(...args);
  }
  override async delete(key: string): Promise<void> {
    await turns(key);
    return super.delete(key);
  }
}

async function turns(key: string): Promise<void> {
  for (let i = 0; i < (key.includes(':revoked:') ? 20 : 2); i += 1)
    await new Promise((resolve) => setImmediate(resolve));
}

function setup() {
  const options = resolveVerificationOptions({
    api: { baseUrl: 'http://127.0.0.1:9', apiKey: 'key', apiSecret: 'secret-secret-secret' },
    clock: () => now,
    owner: () => 'alice',
  });
  const store = new RoundTripStore({ clock: () => now });
  const subjects = new SubjectIndex(store, options.dataKeys, RECORD_RETENTION_MS);
  const verification = {
    verifiedFacts: async () => ({
      status: 'verified',
      phoneNumber: NEW,
      verifiedAt: new Date(now - 1000),
      test: false,
      purpose: 'change_phone',
    }),
  } as unknown as VerificationService;
  const meter = { take: async () => true } as unknown as GuardReadMeter;
  const telemetry = new VerificationTelemetry(
    new VerificationLogger(options),
    VerificationMetrics.disabled(),
  );
  const service = new PhoneChange(
    options,
    store,
    verification,
    new VerifiedPhoneClaims(options, subjects),
    subjects,
    meter,
    telemetry,
  );
  return { service, subjects };
}

describe('PhoneChange', () => {
  it("a failing rebind: the host's error comes back only after the old number counts again and the cooldown is free", async () => {
    const { service, subjects } = setup();
    const failure = new Error('the users database is down');
    const answer = await service
      .change({
        request: {},
        verificationId: 'id',
        currentPhoneNumber: OLD,
        rebind: async () => {
          // Meanwhile the old number is off the account.
          expect(await subjects.forgottenAt(OLD, 'alice')).toBe(now);
          throw failure;
        },
      })
      .catch((error: unknown) => error);
    expect(answer).toBe(failure);
    expect(await subjects.forgottenAt(OLD, 'alice')).toBeUndefined();
    // No cooldown kept: the next change goes through.
    const next = await service.change({
      request: {},
      verificationId: 'id',
      currentPhoneNumber: OLD,
      rebind: async () => undefined,
    });
    expect(next.changedAt).toStrictEqual(new Date(now));
  });
});
