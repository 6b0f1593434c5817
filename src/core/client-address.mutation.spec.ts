import { describe, expect, it } from '@jest/globals';
import { clientAddressKey } from './client-address.js';

describe('clientAddressKey with a prefix that ends inside a byte', () => {
  it("keeps the network's bits of that byte and clears only the host's", () => {
    expect(clientAddressKey('2001:db8:1:2ff::1', 60)).toBe('2001:db8:1:2f0::/60');
    expect(clientAddressKey('2001:db8:1:2ff::1', 57)).toBe('2001:db8:1:280::/57');
    expect(clientAddressKey('2001:db8:1:2ff::1', 63)).toBe('2001:db8:1:2fe::/63');
  });
});
