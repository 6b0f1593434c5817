import { describe, expect, it } from '@jest/globals';
import { clientAddressKey, clientNetworkKey } from './client-address.js';

describe('clientAddressKey (the default per-client key of an IP)', () => {
  it.each([
    ['203.0.113.7', '203.0.113.7'],
    ['::ffff:203.0.113.7', '203.0.113.7'],
    ['::FFFF:cb00:7107', '203.0.113.7'],
    ['2001:db8:1:2::1', '2001:db8:1:2::/64'],
    ['2001:0DB8:0001:0002:ffff:ffff:ffff:ffff', '2001:db8:1:2::/64'],
    ['fe80::1%eth0', 'fe80::/64'],
    ['::1', '::/64'],
  ])('%s → %s', (ip, key) => {
    expect(clientAddressKey(ip)).toBe(key);
  });

  it('takes the prefix length: /56 groups a subscriber, /128 is the address', () => {
    expect(clientAddressKey('2001:db8:1:2ff::1', 56)).toBe('2001:db8:1:200::/56');
    expect(clientAddressKey('2001:db8::1', 128)).toBe('2001:db8::1/128');
  });

  it('leaves a value that is not an IP address as given (no legacy IPv4 spellings folded)', () => {
    expect(clientAddressKey('0x7f.1')).toBe('0x7f.1');
    expect(clientAddressKey('user-42')).toBe('user-42');
  });
});

describe('clientNetworkKey (the network of a client address: one holder of many addresses)', () => {
  it.each([
    ['203.0.113.7', '203.0.113.0/24'],
    ['203.0.113.255', '203.0.113.0/24'],
    ['::ffff:203.0.113.7', '203.0.113.0/24'],
    ['2001:db8:1:2::1', '2001:db8:1::/48'],
    ['2001:db8:1:ffff:ffff:ffff:ffff:ffff', '2001:db8:1::/48'],
    ['2001:db8:ffff::1', '2001:db8:ffff::/48'],
  ])('%s → %s', (ip, key) => {
    expect(clientNetworkKey(ip)).toBe(key);
  });

  it('two addresses of one /24 share a key, of neighbouring /24s do not', () => {
    expect(clientNetworkKey('198.51.100.1')).toBe(clientNetworkKey('198.51.100.254'));
    expect(clientNetworkKey('198.51.100.1')).not.toBe(clientNetworkKey('198.51.101.1'));
  });

  it('is undefined for a value that is not an IP address', () => {
    expect(clientNetworkKey('user-42')).toBeUndefined();
    expect(clientNetworkKey('connection-reset')).toBeUndefined();
    expect(clientNetworkKey('')).toBeUndefined();
  });
});
