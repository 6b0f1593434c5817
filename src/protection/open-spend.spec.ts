import { describe, expect, it } from '@jest/globals';
import { restoredOpenSpend, storedOpenSpend, type OpenSpend } from './open-spend.js';

describe('OpenSpend as stored: a pending session keeps one until it ends', () => {
  const reserved: OpenSpend = {
    key: '20787',
    windowEndsAt: 1_796_083_200_000,
    minor: 300,
    billing: 'on_delivery',
  };
  const onProof: OpenSpend = {
    key: '20787',
    windowEndsAt: 1_796_083_200_000,
    minor: 25,
    billing: 'on_verified',
    onProof: true,
    callers: ['client:a', 'address:b'],
    reserveFrom: 900,
  };

  it('reads back every field as it was', () => {
    expect(restoredOpenSpend(storedOpenSpend(reserved))).toStrictEqual(reserved);
    expect(restoredOpenSpend(storedOpenSpend(onProof))).toStrictEqual(onProof);
  });

  it('one letter a field and a billing: a reservation is 47 characters instead of 80', () => {
    expect(storedOpenSpend(reserved)).toBe('{"k":"20787","t":1796083200000,"m":300,"b":"d"}');
    expect(JSON.stringify(reserved)).toHaveLength(80);
    // Instances of one deployment read what the others wrote: every letter is part of the stored form.
    expect(storedOpenSpend(onProof)).toBe(
      '{"k":"20787","t":1796083200000,"m":25,"b":"v","p":true,"c":["client:a","address:b"],"r":900}',
    );
    expect(storedOpenSpend({ ...reserved, billing: 'on_initiation' })).toContain('"b":"i"');
  });

  it('one stored with long names or its billing named (older versions) reads as it was; a broken one throws', () => {
    expect(restoredOpenSpend(JSON.stringify(onProof))).toStrictEqual(onProof);
    const billingNamed = '{"k":"20787","t":1796083200000,"m":300,"b":"on_delivery"}';
    expect(restoredOpenSpend(billingNamed)).toStrictEqual(reserved);
    expect(() => restoredOpenSpend('{')).toThrow();
  });
});
