import { describe, expect, it } from '@jest/globals';
import { literalPrefix } from './global-prefix.js';

describe('literalPrefix: a cookie Path a request path can match', () => {
  it.each([
    ['/verification', '/verification'],
    ['/v1/verification', '/v1/verification'],
    ['/api/:tenant/verification', '/api'],
    ['/:tenant/verification', '/'],
    ['/api/*splat/verification', '/api'],
    ['/api{/:tenant}/verification', '/'],
    ['/', '/'],
  ])('%s → %s', (path, expected) => {
    expect(literalPrefix(path)).toBe(expected);
  });
});
