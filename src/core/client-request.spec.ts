import { isIP } from 'node:net';
import { describe, expect, it } from '@jest/globals';
import { clientIp, RESET_CONNECTION_ADDRESS } from './client-request.js';

describe('clientIp (the address Express or Fastify computed)', () => {
  it('is the request’s ip when it has one', () => {
    expect(clientIp({ ip: '203.0.113.7', socket: { localPort: 3000 } })).toBe('203.0.113.7');
  });

  it.each([
    ['Express or Fastify, its socket', { ip: undefined, socket: { localPort: 3000 } }],
    ['an empty ip', { ip: '', socket: { localPort: 3000 } }],
    ['Fastify, its raw request’s socket', { raw: { socket: { localPort: 3000 } } }],
    ['a port of 0', { socket: { localPort: 0 } }],
  ])('a connection already reset (%s) shares one key', (_, request) => {
    expect(clientIp(request)).toBe(RESET_CONNECTION_ADDRESS);
  });

  it('that key is an address to the meters (text, not empty) and no IP anyone has', () => {
    // An empty key would read as no address at all: the host's own call, which no per-address meter counts.
    expect(RESET_CONNECTION_ADDRESS).toMatch(/^[a-z-]+$/);
    expect(isIP(RESET_CONNECTION_ADDRESS)).toBe(0);
  });

  it.each([
    ['the host’s own call', undefined],
    ['a request without a socket', {}],
    ['a Unix socket (no local port)', { socket: {} }],
    ['a raw request on a Unix socket', { raw: { socket: {} } }],
    ['an ip that is not text', { ip: 42 }],
    ['null', null],
  ])('%s has no client address', (_, request) => {
    expect(clientIp(request)).toBeUndefined();
  });

  it('reads the request’s own socket before its raw request’s', () => {
    expect(clientIp({ socket: {}, raw: { socket: { localPort: 3000 } } })).toBeUndefined();
  });
});
