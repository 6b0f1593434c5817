import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { Test } from '@nestjs/testing';
import { PriceBook } from '../../src/account/price-book.js';
import { VerificationTelemetry } from '../../src/observability/verification-telemetry.js';
import { RESOLVED_VERIFICATION_OPTIONS } from '../../src/options/verification-options.tokens.js';
import { PROTECTION_PROVIDERS } from '../../src/protection/protection.providers.js';
import { VerificationStore } from '../../src/store/verification-store.interface.js';
import type { Money } from '../../src/api/api.types.js';
import { VerificationClientError } from '../../src/core/verification.errors.js';
import { DataKeys } from '../../src/core/data-keys.js';
import { resolveVerificationOptions, type LimitsOptions } from '../../src/options/verification.options.js';
import { ProtectionKeys } from '../../src/protection/protection-keys.js';
import { StartPermit, type PermitTerms } from '../../src/protection/start-permit.js';
import {
  VerificationProtection,
  type HandBack,
} from '../../src/protection/verification-protection.service.js';
import type { StartCandidate, StartedSession } from '../../src/protection/verification-protection.types.js';
import { MemoryStore } from '../../src/store/memory.store.js';
import { telemetryOf } from '../support/telemetry.js';

/** A permit over recording fakes: `log` lists what was given back, settled, attributed and warned. */
function recordingPermit(
  overrides: {
    attribute?: () => Promise<void>;
    settle?: () => Promise<void>;
    release?: () => Promise<void>;
    /** The API's 429 shared with every instance; `null`: the permit has none (nothing to share it on). */
    backOff?: (() => Promise<void>) | null;
  } = {},
) {
  const log: string[] = [];
  const hold = (name: string) => ({
    release: async () => {
      log.push(`release ${name}`);
      await overrides.release?.();
    },
  });
  const admission: PermitTerms = {
    resendAvailableAt: new Date(1_700_000_060_000),
    claim: undefined,
    suspected: false,
    holds: [hold('cooldown'), hold('limits'), hold('pumping')],
    reservation: {
      release: async () => {
        log.push('release reservation');
      },
      settle: async (cost: Money | undefined) => {
        log.push(`settle ${cost?.amount}`);
        await overrides.settle?.();
      },
    },
    attribute: async (session: StartedSession) => {
      log.push(`attribute ${session.requestId}`);
      await overrides.attribute?.();
    },
    ...(overrides.backOff === null
      ? {}
      : {
          backOff: async (ms: number) => {
            log.push(`back off ${ms}`);
            await overrides.backOff?.();
          },
        }),
  };
  const logger = {
    warn: (message: string, fields?: Record<string, unknown>) =>
      log.push(`warn ${message} ${JSON.stringify(fields)}`),
    error: (message: string) => log.push(`error ${message}`),
  };
  return { permit: new StartPermit(admission, logger), log };
}

const session: StartedSession = {
  requestId: 'req-1',
  expiresAt: 1_700_000_300_000,
  cost: { amount: 3.5, currency: 'RUB' },
};

describe('StartPermit', () => {
  it('commit attributes the session and settles the reservation with its real cost, giving nothing back', async () => {
    const { permit, log } = recordingPermit();
    expect(permit.isSettled).toBe(false);
    await permit.commit(session);
    expect(permit.isSettled).toBe(true);
    expect(log).toEqual(['attribute req-1', 'settle 3.5']);
    expect(permit.resendAvailableAt).toEqual(new Date(1_700_000_060_000));
  });

  it('rollback with nothing sent gives back the reservation and every hold, last taken first', async () => {
    const { permit, log } = recordingPermit();
    await permit.rollback({ nothingSent: true });
    expect(log).toEqual(['release reservation', 'release pumping', 'release limits', 'release cooldown']);
  });

  it('rollback with nothing sent returns once every hold is given back (a store that answers late included)', async () => {
    // A remote store: each give-back lands 5 ms later. The start's answer goes out after rollback, and the
    // caller's next start must find its holds given back.
    const given: number[] = [];
    const { permit } = recordingPermit({
      release: async () => {
        await new Promise((r) => setTimeout(r, 5));
        given.push(1);
      },
    });
    await permit.rollback({ nothingSent: true });
    expect(given).toHaveLength(3);
  });

  it('rollback when something may have been sent keeps everything counted', async () => {
    const { permit, log } = recordingPermit();
    await permit.rollback({ nothingSent: false });
    expect(permit.isSettled).toBe(true);
    expect(log).toEqual([]);
  });

  it('settles once: the first settlement counts, later ones do nothing', async () => {
    const committed = recordingPermit();
    await committed.permit.commit(session);
    await committed.permit.rollback({ nothingSent: true });
    await committed.permit.commit(session);
    expect(committed.log).toEqual(['attribute req-1', 'settle 3.5']);

    const rolledBack = recordingPermit();
    await rolledBack.permit.rollback({ nothingSent: false });
    await rolledBack.permit.rollback({ nothingSent: true });
    await rolledBack.permit.commit(session);
    expect(rolledBack.log).toEqual([]);
  });

  it('commit never throws: a failed attribution or settlement is logged by name and message and the other still runs', async () => {
    const { permit, log } = recordingPermit({
      attribute: () => Promise.reject(new RangeError('store down')),
      settle: () => Promise.reject(new TypeError('store down')),
    });
    await expect(permit.commit(session)).resolves.toBeUndefined();
    // Issued together (one store round trip): what ran and what was logged, in whatever order.
    expect([...log].sort()).toEqual(
      [
        'attribute req-1',
        'warn pumping defence: the start could not be attributed {"error":"RangeError: store down"}',
        'settle 3.5',
        'warn spend cap: the real cost could not be recorded {"error":"TypeError: store down"}',
      ].sort(),
    );
  });

  it('rollback never throws: a failed release does not keep the others from being given back', async () => {
    const { permit, log } = recordingPermit({ release: () => Promise.reject(new Error('store down')) });
    await expect(permit.rollback({ nothingSent: true })).resolves.toBeUndefined();
    expect(log.filter((line) => line.startsWith('release'))).toHaveLength(4);
  });

  it("rollback shares the API's 429 wait only when the API answered one: its Retry-After in ms, once", async () => {
    const limited = recordingPermit();
    await limited.permit.rollback({ nothingSent: true, upstreamRetryAfterMs: 2_000 });
    expect(limited.log.filter((line) => line.startsWith('back off'))).toEqual(['back off 2000']);
    const refused = recordingPermit();
    await refused.permit.rollback({ nothingSent: true });
    expect(refused.log.filter((line) => line.startsWith('back off'))).toEqual([]);
  });

  it("rollback never throws on the API's 429: a wait the store could not share is logged; a permit with nothing to share it on gives back all the same", async () => {
    const { permit, log } = recordingPermit({ backOff: () => Promise.reject(new Error('store down')) });
    await expect(
      permit.rollback({ nothingSent: true, upstreamRetryAfterMs: 1_000 }),
    ).resolves.toBeUndefined();
    expect(log.filter((line) => line.startsWith('warn'))).toEqual([
      expect.stringMatching(/^warn the API rate limit could not be shared \{"error":".*store down/),
    ]);
    const bare = recordingPermit({ backOff: null });
    await expect(
      bare.permit.rollback({ nothingSent: true, upstreamRetryAfterMs: 1_000 }),
    ).resolves.toBeUndefined();
    expect(bare.log.filter((line) => line.startsWith('release'))).toHaveLength(4);
  });
});

const HOUR = 3_600_000;

describe('VerificationProtection: admitting starts on a store', () => {
  let clock: number;
  let store: MemoryStore;

  beforeEach(() => {
    clock = 1_700_000_000_000;
    store = new MemoryStore({ clock: () => clock });
  });
  afterEach(async () => {
    await store.close();
  });

  /** Only a cooldown and one start per number and caller an hour, unless `limits` says more. */
  const protection = async (limits: LimitsOptions = {}) => {
    const options = resolveVerificationOptions({
      api: { baseUrl: 'http://127.0.0.1:1', apiKey: 'k', apiSecret: 's' },
      clock: () => clock,
      limits: {
        startPerIp: false,
        startPerPhone: false,
        checkPerIp: false,
        spendCap: false,
        pumping: false,
        wrongCodesPerPhone: false,
        wrongCodesPerOwner: false,
        resendCooldownMs: 60_000,
        startPerPhoneAndCaller: { points: 1, windowMs: HOUR },
        ...limits,
      },
    });
    // The registration's protection providers, on this store (and no prices: the spend cap is off).
    const made = await Test.createTestingModule({
      providers: [
        { provide: RESOLVED_VERIFICATION_OPTIONS, useValue: options },
        { provide: VerificationStore, useValue: store },
        { provide: VerificationTelemetry, useValue: telemetryOf(options) },
        { provide: PriceBook, useValue: {} },
        ...PROTECTION_PROVIDERS,
      ],
    }).compile();
    return made.get(VerificationProtection);
  };
  const attempt = (owner?: string): StartCandidate => ({
    phoneNumber: '+79160000001',
    method: 'sms',
    owner,
    clientKey: 'client-1',
    ip: '198.51.100.1',
    request: {},
  });
  const refusalOf = async (admitting: Promise<unknown>) => {
    const error = await admitting.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(VerificationClientError);
    return (error as VerificationClientError).extra.reason;
  };

  it('a rollback with nothing sent lets the same start in again at once', async () => {
    const p = await protection();
    const permit = await p.admitSwitch(attempt());
    expect(permit.resendAvailableAt).toEqual(new Date(clock + 60_000));
    await permit.rollback({ nothingSent: true });
    await (await p.admitSwitch(attempt())).commit({ requestId: 'r', expiresAt: clock + 300_000 });
  });

  it('a committed start, a rollback that may have sent something and an unsettled permit all keep the cooldown', async () => {
    const p = await protection();
    await (await p.admitSwitch(attempt('a'))).commit({ requestId: 'r', expiresAt: clock + 300_000 });
    expect(await refusalOf(p.admitSwitch(attempt('a')))).toBe('resend_cooldown');

    await (await p.admitSwitch(attempt('b'))).rollback({ nothingSent: false });
    expect(await refusalOf(p.admitSwitch(attempt('b')))).toBe('resend_cooldown');

    await p.admitSwitch(attempt('c')); // never settled
    expect(await refusalOf(p.admitSwitch(attempt('c')))).toBe('resend_cooldown');
    // Nothing outlives its window: past the cooldown, the per-number limit still counts the
    // unsettled start; past its hour, the caller starts again.
    clock += 60_000;
    expect(await refusalOf(p.admitSwitch(attempt('c')))).toBe('start_phone_caller_limit');
    clock += HOUR;
    expect((await p.admitSwitch(attempt('c'))).isSettled).toBe(false);
  });

  it('a refused admission gives back what it took before the refusal', async () => {
    const p = await protection({
      resendCooldownMs: 60_000,
      startPerPhoneAndCaller: { points: 1, windowMs: HOUR },
    });
    await (await p.admitSwitch(attempt('a'))).commit({ requestId: 'r', expiresAt: clock + 300_000 });
    clock += 60_000;
    // The cooldown is claimed, then the per-number limit refuses: the cooldown is lifted again.
    expect(await refusalOf(p.admitSwitch(attempt('a')))).toBe('start_phone_caller_limit');
    expect(
      await store.get(
        ProtectionKeys.cooldown(new DataKeys(undefined, 's'), 'owner:a', '+79160000001', 'sms'),
      ),
    ).toBeNull();
  });

  /** The permit protection hands a start that is not handed a session back. */
  const permitOf = (admission: HandBack | StartPermit): StartPermit => {
    expect(admission).toBeInstanceOf(StartPermit);
    return admission as StartPermit;
  };

  it('admitStart: identical concurrent starts of one owner get one permit; the others are handed its session', async () => {
    const p = await protection();
    const record = { requestId: 'shared', expiresAt: clock + 300_000 };
    const first = permitOf(await p.admitStart(attempt('owner')));
    const duplicate = p.admitStart(attempt('owner'));
    await first.commit(record);
    expect(await duplicate).toEqual({ handBack: 'shared', resendAvailableAt: new Date(clock + 60_000) });
    // Later, while the session is pending, the same start is handed back without a new permit.
    expect(await p.admitStart(attempt('owner'))).toEqual({
      handBack: 'shared',
      resendAvailableAt: new Date(clock + 60_000),
    });
    // Found ended by the caller (stale): no longer handed back; the cooldown refuses a new start.
    expect(await refusalOf(p.admitStart(attempt('owner'), 'shared'))).toBe('resend_cooldown');
  });

  it('admitStart: a failed start fails its concurrent duplicates too, then frees the claim', async () => {
    const p = await protection();
    const failure = new VerificationClientError('service_unavailable');
    const first = permitOf(await p.admitStart(attempt('owner')));
    const duplicate = p.admitStart(attempt('owner'));
    await first.rollback({ nothingSent: true, failure });
    await expect(duplicate).rejects.toBe(failure);
    permitOf(await p.admitStart(attempt('owner')));
  });

  it('admitStart: a refused admission frees the claim for the next start', async () => {
    const p = await protection();
    await permitOf(await p.admitSwitch(attempt('owner'))).commit({
      requestId: 'r',
      expiresAt: clock + 300_000,
    });
    expect(await refusalOf(p.admitStart(attempt('owner')))).toBe('resend_cooldown');
    expect(
      await store.get(
        ProtectionKeys.coalesce(new DataKeys(undefined, 's'), 'owner:owner', '+79160000001', 'sms'),
      ),
    ).toBeNull();
  });
});
