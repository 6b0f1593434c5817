import { describe, expect, it } from '@jest/globals';
import {
  CODE_ENTRIES,
  DEFAULT_VERIFICATION_METHODS,
  methodTraits,
  pollIntervalMs,
  SLOWEST_POLL_INTERVAL_MS,
  UNKNOWN_METHOD_TRAITS,
  VERIFICATION_METHODS,
  type MethodTraits,
} from './verification-method.js';

/** What each method does, as the spec and the guides describe it: the table must say exactly this. */
const EXPECTED: Record<(typeof VERIFICATION_METHODS)[number], MethodTraits> = {
  reverse_flash_call: {
    pollIntervalMs: 1500,
    codeEntry: 'never',
    codeAwaited: 'never',
    codeRequestAnnounced: false,
    offeredByDefault: true,
    billing: 'on_verified',
    chargedOnProof: true,
  },
  flash_call: {
    pollIntervalMs: 2500,
    codeEntry: 'always',
    codeAwaited: 'from_start',
    codeRequestAnnounced: false,
    offeredByDefault: true,
    billing: 'on_delivery',
    chargedOnProof: false,
  },
  msgr1_otp: {
    pollIntervalMs: 2500,
    codeEntry: 'always',
    codeAwaited: 'from_start',
    codeRequestAnnounced: false,
    offeredByDefault: true,
    billing: 'on_initiation',
    chargedOnProof: false,
  },
  msgr2_bot: {
    pollIntervalMs: 2500,
    codeEntry: 'always',
    codeAwaited: 'when_api_says',
    codeRequestAnnounced: false,
    offeredByDefault: true,
    billing: 'on_delivery',
    chargedOnProof: true,
  },
  sms: {
    pollIntervalMs: 2500,
    codeEntry: 'always',
    codeAwaited: 'from_start',
    codeRequestAnnounced: false,
    offeredByDefault: true,
    billing: 'on_delivery',
    chargedOnProof: false,
  },
  operator_id: {
    pollIntervalMs: 2500,
    codeEntry: 'on_fallback',
    codeAwaited: 'when_api_says',
    codeRequestAnnounced: true,
    offeredByDefault: true,
    billing: 'on_initiation',
    chargedOnProof: false,
  },
  voice: {
    pollIntervalMs: 2500,
    codeEntry: 'always',
    codeAwaited: 'from_start',
    codeRequestAnnounced: false,
    offeredByDefault: false,
    billing: 'on_delivery',
    chargedOnProof: false,
  },
};

describe('method traits: one table says what each method does differently', () => {
  it.each(VERIFICATION_METHODS)('%s has the traits the spec describes', (method) => {
    expect(methodTraits(method)).toStrictEqual(EXPECTED[method]);
    expect(pollIntervalMs(method)).toBe(EXPECTED[method].pollIntervalMs);
  });

  it('polls at the spec pace: 1–2 s for reverse flash call, 2–3 s for every other method', () => {
    for (const method of VERIFICATION_METHODS) {
      const [min, max] = method === 'reverse_flash_call' ? [1000, 2000] : [2000, 3000];
      expect(pollIntervalMs(method)).toBeGreaterThanOrEqual(min);
      expect(pollIntervalMs(method)).toBeLessThanOrEqual(max);
    }
    expect(SLOWEST_POLL_INTERVAL_MS).toBe(2500);
  });

  it('is consistent: no code field exactly when no code is typed; an announced code request comes later', () => {
    for (const traits of [...VERIFICATION_METHODS.map(methodTraits), UNKNOWN_METHOD_TRAITS]) {
      expect(CODE_ENTRIES).toContain(traits.codeEntry);
      expect(traits.codeEntry === 'never').toBe(traits.codeAwaited === 'never');
      if (traits.codeRequestAnnounced) expect(traits.codeAwaited).toBe('when_api_says');
    }
  });

  it('a method this version does not know is a plain code method, never offered by default', () => {
    for (const unknown of ['whatsapp_otp', '', 'msgr1', 'SMS', 'constructor', 'toString', '__proto__']) {
      expect(methodTraits(unknown)).toBe(UNKNOWN_METHOD_TRAITS);
    }
    expect(UNKNOWN_METHOD_TRAITS).toStrictEqual({
      ...EXPECTED.sms,
      offeredByDefault: false,
      billing: 'on_initiation',
    });
  });

  it("bills as the spec's table says: reverse flash call when verified, sms/flash_call/msgr2_bot on delivery, msgr1_otp/operator_id at initiation", () => {
    const by = (billing: string) => VERIFICATION_METHODS.filter((m) => methodTraits(m).billing === billing);
    expect(by('on_verified')).toStrictEqual(['reverse_flash_call']);
    expect(by('on_delivery')).toStrictEqual(['flash_call', 'msgr2_bot', 'sms', 'voice']);
    expect(by('on_initiation')).toStrictEqual(['msgr1_otp', 'operator_id']);
  });

  it('offers every method but voice by default, in the list order', () => {
    expect(DEFAULT_VERIFICATION_METHODS).toStrictEqual(VERIFICATION_METHODS.filter((m) => m !== 'voice'));
  });
});
