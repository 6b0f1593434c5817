import { describe, expect, it } from '@jest/globals';
import { toInitiateRequestWire } from './api.mapper.js';
import { isKnownMethod, normalizeMethod, toWireMethod } from './method-names.js';

describe('method names', () => {
  it('normalises the schema name msgr1 to msgr1_otp and passes others through', () => {
    expect(normalizeMethod('msgr1')).toBe('msgr1_otp');
    expect(normalizeMethod('msgr1_otp')).toBe('msgr1_otp');
    expect(normalizeMethod('sms')).toBe('sms');
    expect(normalizeMethod('carrier_pigeon')).toBe('carrier_pigeon');
  });

  it('sends msgr1_otp as msgr1_otp (the guides name) and every other method as given', () => {
    expect(toWireMethod('msgr1_otp')).toBe('msgr1_otp');
    expect(toWireMethod('reverse_flash_call')).toBe('reverse_flash_call');
    expect(
      toInitiateRequestWire({ phoneNumber: '+79123456789', method: 'msgr1_otp', expirySeconds: 120 }),
    ).toStrictEqual({
      phone_number: '+79123456789',
      method: 'msgr1_otp',
      expiry_seconds: 120,
    });
    expect(toInitiateRequestWire({ phoneNumber: '+79123456789', method: 'sms' })).not.toHaveProperty(
      'expiry_seconds',
    );
  });

  it('knows exactly the canonical methods', () => {
    for (const m of [
      'reverse_flash_call',
      'flash_call',
      'msgr1_otp',
      'msgr2_bot',
      'sms',
      'operator_id',
      'voice',
    ]) {
      expect(isKnownMethod(m)).toBe(true);
    }
    expect(isKnownMethod('msgr1')).toBe(false);
    expect(isKnownMethod('carrier_pigeon')).toBe(false);
  });
});
