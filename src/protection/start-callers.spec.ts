/**
 * Who a start is, to each meter (start-callers.ts): the rate-limit key, the starter a pending session is
 * handed back to, the givers of a free start's budget, the caller of the per-number limit and cooldown.
 */
import { describe, expect, it } from '@jest/globals';
import type { StartCandidate } from './verification-protection.types.js';
import { clientKeyOf, freeCallersOf, limitsCallerOf, starterOf } from './start-callers.js';

const limits = (key?: (req: unknown) => unknown) =>
  ({ key, ipv6PrefixLength: 64 }) as unknown as Parameters<typeof clientKeyOf>[0];
const candidate = (c: Partial<StartCandidate>): StartCandidate =>
  ({
    phoneNumber: '+79123456789',
    method: 'sms',
    owner: undefined,
    clientKey: undefined,
    ip: undefined,
    request: {},
    ...c,
  }) as StartCandidate;

describe('clientKeyOf (the caller’s rate-limit key)', () => {
  it('is the host’s key when it gives text or a finite number', () => {
    expect(
      clientKeyOf(
        limits(() => 'user-1'),
        {},
        '203.0.113.7',
      ),
    ).toBe('user-1');
    expect(
      clientKeyOf(
        limits(() => 42),
        {},
        '203.0.113.7',
      ),
    ).toBe('42');
    expect(
      clientKeyOf(
        limits(() => 0),
        {},
        '203.0.113.7',
      ),
    ).toBe('0');
  });

  it.each([
    ['nothing', undefined],
    ['an empty text', ''],
    ['NaN', Number.NaN],
    ['Infinity', Number.POSITIVE_INFINITY],
    ['an object', { id: 1 }],
    ['null', null],
  ])('falls back to the client address when the host’s key gives %s', (_, key) => {
    expect(
      clientKeyOf(
        limits(() => key),
        {},
        '203.0.113.7',
      ),
    ).toBe('203.0.113.7');
    expect(
      clientKeyOf(
        limits(() => key),
        {},
        '2001:db8:1:2::7',
      ),
    ).toBe('2001:db8:1:2::/64');
  });

  it('without a host key, the address (an IPv6 by its prefix); without an address, nobody', () => {
    expect(clientKeyOf(limits(), {}, '2001:db8:1:2::7')).toBe('2001:db8:1:2::/64');
    expect(clientKeyOf(limits(), {}, undefined)).toBeUndefined();
    expect(
      clientKeyOf(
        limits(() => ''),
        {},
        undefined,
      ),
    ).toBeUndefined();
  });

  it('hands the host’s key function the request', () => {
    const seen: unknown[] = [];
    const request = { headers: {} };
    clientKeyOf(
      limits((req) => seen.push(req)),
      request,
      undefined,
    );
    expect(seen).toStrictEqual([request]);
  });
});

describe('starterOf and limitsCallerOf', () => {
  it('the starter: the owner, else the browser key, else nobody (never the address)', () => {
    expect(starterOf(candidate({ owner: 'u1', browserKey: 'b1', ip: '203.0.113.7' }))).toBe('owner:u1');
    expect(starterOf(candidate({ browserKey: 'b1', ip: '203.0.113.7', clientKey: 'k' }))).toBe('browser:b1');
    expect(starterOf(candidate({ ip: '203.0.113.7', clientKey: 'k' }))).toBeUndefined();
  });

  it('the limits’ caller: the owner, else the client key, else one anonymous caller (never the browser key)', () => {
    expect(limitsCallerOf(candidate({ owner: 'u1', clientKey: 'k' }))).toBe('owner:u1');
    expect(limitsCallerOf(candidate({ clientKey: 'k', browserKey: 'b1' }))).toBe('client:k');
    expect(limitsCallerOf(candidate({ browserKey: 'b1' }))).toBe('anonymous');
  });
});

describe('freeCallersOf (whose free budget a start spends)', () => {
  it('its client key, its address when the key is not the address, its network and its owner', () => {
    expect(
      freeCallersOf(candidate({ clientKey: 'user-1', ip: '203.0.113.7', owner: 'u1' }), {
        ipv6PrefixLength: 64,
      }),
    ).toStrictEqual(['client:user-1', 'address:203.0.113.7', 'network:203.0.113.0/24', 'owner:u1']);
  });

  it('the address once when it is the client key; an IPv6 address by its prefix, its network by /48', () => {
    expect(
      freeCallersOf(candidate({ clientKey: '203.0.113.7', ip: '203.0.113.7' }), { ipv6PrefixLength: 64 }),
    ).toStrictEqual(['client:203.0.113.7', 'network:203.0.113.0/24']);
    expect(
      freeCallersOf(candidate({ clientKey: '2001:db8:1:2::/64', ip: '2001:db8:1:2::7' }), {
        ipv6PrefixLength: 64,
      }),
    ).toStrictEqual(['client:2001:db8:1:2::/64', 'network:2001:db8:1::/48']);
    expect(freeCallersOf(candidate({ ip: '2001:db8:1:2::7' }), { ipv6PrefixLength: 56 })).toStrictEqual([
      'address:2001:db8:1::/56',
      'network:2001:db8:1::/48',
    ]);
  });

  it('a reset connection’s key has no network; a host call without address or key is its owner’s alone, or nobody’s', () => {
    expect(
      freeCallersOf(candidate({ clientKey: 'connection-reset', ip: 'connection-reset' }), {
        ipv6PrefixLength: 64,
      }),
    ).toStrictEqual(['client:connection-reset']);
    expect(freeCallersOf(candidate({ owner: 'u1' }), { ipv6PrefixLength: 64 })).toStrictEqual(['owner:u1']);
    // A host key without an address (the host's own call with its key): that key alone.
    expect(freeCallersOf(candidate({ clientKey: 'k' }), { ipv6PrefixLength: 64 })).toStrictEqual([
      'client:k',
    ]);
    expect(freeCallersOf(candidate({}), { ipv6PrefixLength: 64 })).toStrictEqual([]);
  });
});
