import { describe, expect, it } from '@jest/globals';
import { DataKeys } from '../core/data-keys.js';
import { foldKey as foldKeyOf, shelfOf } from './history-shelves.js';

const keys = new DataKeys(undefined, 'a-secret-of-the-account');
const foldKey: (ring: string, entry: Parameters<typeof foldKeyOf>[2]) => string | undefined = (ring, entry) =>
  foldKeyOf(keys, ring, entry, false);

const at = Date.UTC(2026, 0, 1, 10, 0, 0);
const base = { phoneNumber: '+79161234567', at };

describe('history shelves: what anyone can cause for free never shares a shelf with outcomes', () => {
  it.each([
    [{ kind: 'outcome', status: 'verified' }, 'verified'],
    [{ kind: 'outcome', status: 'failed' }, 'outcome'],
    [{ kind: 'outcome', status: 'expired' }, 'outcome'],
    [{ kind: 'check', check: 'right' }, 'verified'],
    [{ kind: 'start', promoted: true }, 'verified'],
    [{ kind: 'check', check: 'wrong' }, 'check'],
    [{ kind: 'check' }, 'check'],
    [{ kind: 'start' }, 'start'],
    [{ kind: 'switch' }, 'start'],
    [{ kind: 'start', resumed: true }, 'other'],
    [{ kind: 'refusal' }, 'other'],
    [{ kind: 'start', method: 'sms' }, 'start'],
    [{ kind: 'switch', method: 'flash_call' }, 'start'],
    [{ kind: 'outcome', status: 'expired', method: 'sms' }, 'outcome'],
    [{ kind: 'start', method: 'reverse_flash_call' }, 'free'],
    [{ kind: 'switch', method: 'msgr2_bot' }, 'free'],
    [{ kind: 'outcome', status: 'failed', method: 'reverse_flash_call' }, 'free'],
    [{ kind: 'outcome', status: 'verified', method: 'reverse_flash_call' }, 'verified'],
    [{ kind: 'start', method: 'reverse_flash_call', promoted: true }, 'verified'],
  ] as const)('%j → %s', (entry, shelf) => {
    expect(shelfOf({ ...base, ...entry })).toBe(shelf);
  });

  it('folds a refusal or a resume with the same one of the same hour, nothing else', () => {
    const refusal = {
      ...base,
      kind: 'refusal',
      operation: 'start',
      errorCode: 'rate_limit_exceeded',
    } as const;
    const key = foldKey('r', refusal);
    expect(key).toMatch(/^r:fold:/);
    expect(foldKey('r', { ...refusal, at: at + 3_599_999 })).toBe(key);
    expect(foldKey('r', { ...refusal, at: at + 3_600_000 })).not.toBe(key);
    expect(foldKey('r', { ...refusal, reason: 'cooldown' })).not.toBe(key);
    expect(foldKey('r', { ...refusal, owner: 'bob' })).not.toBe(key);
    expect(foldKey('r', { ...refusal, method: 'sms' })).not.toBe(key);
    expect(foldKey('other', refusal)).not.toBe(key);
    const resume = { ...base, kind: 'start', resumed: true, requestId: 'a' } as const;
    expect(foldKey('r', resume)).toMatch(/^r:fold:/);
    expect(foldKey('r', { ...resume, requestId: 'b' })).not.toBe(foldKey('r', resume));
    expect(foldKey('r', { ...base, kind: 'start' })).toBeUndefined();
    expect(foldKey('r', { ...base, kind: 'outcome' })).toBeUndefined();
    expect(foldKey('r', { ...base, kind: 'check', check: 'wrong' })).toBeUndefined();
  });

  it("in a number's ring, a refusal folds whoever asked; a resume stays its owner's", () => {
    const refusal = { ...base, kind: 'refusal', operation: 'start', errorCode: 'method_held' } as const;
    const ofNumber = (entry: Parameters<typeof foldKeyOf>[2]) => foldKeyOf(keys, 'r', entry, true);
    expect(ofNumber({ ...refusal, owner: 'bob' })).toBe(ofNumber({ ...refusal, owner: 'carol' }));
    expect(ofNumber({ ...refusal, owner: 'bob' })).not.toBe(ofNumber({ ...refusal, reason: 'cooldown' }));
    const resume = { ...base, kind: 'start', resumed: true, requestId: 'a' } as const;
    expect(ofNumber({ ...resume, owner: 'bob' })).not.toBe(ofNumber({ ...resume, owner: 'carol' }));
  });
});
